/**
 * Boletas (39/41) leave through the SII's boleta REST channel, not DTEUpload: their own envelope
 * (EnvioBOLETA, at most 500) and their own upload call. This module is the uploader's one
 * dispatch by channel; everything else (grouping, leases, the recovery rule, the outbox) is the
 * uploader's, unchanged. An upload's channel is stored on `sii_uploads.channel`.
 */
import {
  buildEnvioBoleta,
  buildEnvioDte,
  MAX_BOLETAS_PER_ENVIO,
  type EnvioOptions,
  type SigningCredential,
} from '@dte/engine';
import {
  boletaRestClientFor,
  SiiError,
  type RecepcionDte,
  type SiiClient,
  type UploadOutcome,
} from '@dte/sii-client';

export type UploadChannel = 'dte' | 'boleta';

/** SQL predicate (over `dtes`) true for documents of the boleta channel. */
export const BOLETA_PREDICATE = 'tipo_dte IN (39, 41)';

/** Envelope size of a channel: the configured maxDocs, and never above EnvioBOLETA's 500. */
export function maxDocsOf(channel: UploadChannel, maxDocs: number): number {
  return channel === 'boleta' ? Math.min(maxDocs, MAX_BOLETAS_PER_ENVIO) : maxDocs;
}

export function buildEnvelope(channel: UploadChannel, signed: string[], opts: EnvioOptions): Buffer {
  return channel === 'boleta' ? buildEnvioBoleta(signed, opts) : buildEnvioDte(signed, opts);
}

const LOGIN_OPERATIONS = new Set(['boleta.electronica.semilla', 'boleta.electronica.token']);

/**
 * One POST boleta.electronica.envio of the stored bytes, read as the DTEUpload outcomes the
 * uploader already handles: 200 with a trackid → accepted; 409 (the same file again) → repeated;
 * 401 after a fresh token → auth; 403 → no_permission; 400 → invalid (schema); 5xx, timeouts →
 * transient (with requestSent); an unreadable answer → protocol. A failed login throws, as the
 * DTEUpload session does (nothing was uploaded).
 */
export async function sendBoletaEnvelope(
  sii: SiiClient,
  credential: SigningCredential,
  q: { env: 'cert' | 'prod'; rutCompany: string; xml: Buffer },
): Promise<UploadOutcome> {
  const receipt = (status: number, raw: string, trackId?: string): RecepcionDte => ({
    rutSender: credential.info.rut,
    rutCompany: q.rutCompany,
    file: 'envio-boleta.xml',
    status,
    ...(trackId ? { trackId } : {}),
    errors: [],
    raw,
  });
  try {
    const r = await boletaRestClientFor(sii).enviar({
      env: q.env,
      credential,
      rutCompany: q.rutCompany,
      xml: q.xml,
    });
    return { kind: 'accepted', trackId: r.trackId, receipt: receipt(0, JSON.stringify(r), r.trackId) };
  } catch (err) {
    if (!(err instanceof SiiError)) throw err;
    if (err.operation && LOGIN_OPERATIONS.has(err.operation)) throw err;
    const raw = err.responseExcerpt ?? err.message;
    if (err.kind === 'transient') return { kind: 'transient', error: err };
    if (err.kind === 'protocol') return { kind: 'protocol', error: err };
    switch (err.httpStatus) {
      case 409:
        return { kind: 'repeated', status: 99, receipt: receipt(99, raw), error: err };
      case 401:
        return { kind: 'auth', status: 5, receipt: receipt(5, raw), error: err };
      case 403: {
        const status = err.siiCode === '6' ? 6 : 1;
        return { kind: 'no_permission', status, receipt: receipt(status, raw), error: err };
      }
      default:
        return {
          kind: 'invalid',
          reason: 'schema',
          status: 7,
          errors: [err.glosa ?? err.message],
          receipt: receipt(7, raw),
          error: err,
        };
    }
  }
}
