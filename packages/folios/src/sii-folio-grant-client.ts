import { isSiiError, SiiClient, simulatorEndpoints, type SiiError, type TokenCache } from '@dte/sii-client';
import { FolioGrantError, type FolioGrantClient, type FolioGrantRequest } from './folio-grant-client';

export type SiiFolioGrantClientOptions =
  /** a shared client (its endpoints, deadlines and token cache) */
  | { client: SiiClient }
  /** SII_BASE_URL (a SII simulator's root) and SII_TIMEOUT_MS, as the api's configuration has them */
  | { baseUrl: string; timeoutMs: number; tokenCache?: TokenCache };

/**
 * The SII folio grant through @dte/sii-client (`session(credential).requestFolios`, which logs in
 * with the certificate, caches the token and renews it once when refused). This adapter only
 * translates the client's SiiErrors into FolioGrantError kinds, i.e. the api's caf.* answers:
 *
 * - `rejected` with HTTP 403 (the user may not stamp for the issuer), or a login refused with
 *   ESTADO -07 (the certificate's holder is not enrolled at the SII) → cert_not_authorized
 * - any other `rejected` (quota, type, RUT: the SII said no) → rejected
 * - `transient`, `protocol` and `auth` (the SII refused even a fresh token, or the signed seed) →
 *   unavailable
 *
 * `siiDetail` keeps the SII's words: `{status, error, message}` for an answer of the grant,
 * `{estado, glosa}` for a failed login.
 */
export class SiiFolioGrantClient implements FolioGrantClient {
  private readonly client: SiiClient;

  constructor(opts: SiiFolioGrantClientOptions) {
    this.client =
      'client' in opts
        ? opts.client
        : new SiiClient({
            endpoints: simulatorEndpoints(opts.baseUrl),
            timeoutMs: opts.timeoutMs,
            ...(opts.tokenCache ? { tokenCache: opts.tokenCache } : {}),
          });
  }

  async requestFolios(req: FolioGrantRequest): Promise<{ cafXml: string }> {
    try {
      const cafXml = await this.client.session(req.credential).requestFolios({
        env: req.environment,
        rutCompany: req.rutEmisor,
        tipoDte: req.tipoDte,
        cantidad: req.cantidad,
      });
      return { cafXml };
    } catch (err) {
      throw isSiiError(err) ? folioGrantError(err) : err;
    }
  }
}

function folioGrantError(err: SiiError): FolioGrantError {
  const detail = siiDetail(err);
  const login = err.operation !== 'folios';
  if (login && err.kind === 'auth' && /^-0*7$/.test(err.siiCode ?? '')) {
    return new FolioGrantError(
      'cert_not_authorized',
      'the certificate holder is not enrolled at the SII',
      detail,
    );
  }
  if (!login && err.kind === 'rejected' && err.httpStatus === 403) {
    return new FolioGrantError(
      'cert_not_authorized',
      'the SII says the user may not stamp for the issuer',
      detail,
    );
  }
  if (!login && err.kind === 'rejected') return new FolioGrantError('rejected', err.message, detail);
  // the folio request left and no HTTP answer came back: whether the SII granted is unknown
  const outcomeUnknown = !login && err.requestSent === true && err.httpStatus === undefined;
  return new FolioGrantError('unavailable', err.message, detail, outcomeUnknown);
}

/** What the SII said, when it said anything (a network failure or a timeout has no detail). */
function siiDetail(err: SiiError): Record<string, unknown> | undefined {
  if (err.operation !== 'folios') {
    if (err.siiCode === undefined && err.glosa === undefined) return undefined;
    return { estado: err.siiCode ?? null, glosa: err.glosa ?? null };
  }
  if (err.httpStatus === undefined) return undefined;
  return {
    status: err.httpStatus,
    ...(err.siiCode !== undefined ? { error: err.siiCode } : {}),
    ...(err.glosa !== undefined ? { message: err.glosa } : {}),
  };
}
