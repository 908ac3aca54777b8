/**
 * The purchases and sales register (RCV, registro de compras y ventas). The SII's own RCV calls
 * are undocumented session/JSON calls of its web application (PROTOCOL.md lists them as
 * UNCONFIRMED), so this speaks the SII simulator's documented stand-in (packages/sii-simulator,
 * "RCV"):
 *
 *   GET {base}/rcv/{ventas|compras}/{rut-dv}/{YYYY-MM}   Cookie: TOKEN=…
 *   → 200 {rutEmpresa, periodo, operacion, documentos: [{tipoDte, folio, rutEmisor, rutReceptor,
 *          fchEmis, fechaRecepcion, mntNeto, mntExe, iva, mntTotal, estado, eventos?}]}
 *
 * Configured with the real SII's hosts it refuses before sending anything. Answers: 401 `auth`
 * (a session renews the token once), 403 and other 4xx `rejected`, 5xx/408/429/network
 * `transient`, a 200 that is not the expected JSON `protocol`.
 */
import { REAL_SII_ENDPOINTS, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { sendHttp, type HttpReply } from './http';
import { splitRut } from './rut';
import { endpointsOf, type CallOptions, type SiiTransport } from './transport';
import { decodeBody, excerpt } from './xml';

export type RcvOperacion = 'ventas' | 'compras';

export interface RcvQuery extends CallOptions {
  env: SiiEnvironment;
  token: string;
  rutEmpresa: string;
  operacion: RcvOperacion;
  /** YYYY-MM */
  periodo: string;
}

/** One document as the SII registered it. */
export interface RcvDocumento {
  tipoDte: number;
  folio: number;
  rutEmisor: string;
  rutReceptor: string;
  fchEmis: string;
  /** ISO-8601 instant of the SII's reception */
  fechaRecepcion: string;
  mntNeto: number;
  mntExe: number;
  iva: number;
  mntTotal: number;
  /** REGISTRO, PENDIENTE, RECLAMADO (and any other word the SII uses) */
  estado: string;
  /** register events on the document (ACD, ERM, RCD, RFP, RFT), when the SII shows them */
  eventos: string[];
  /**
   * purchases: the transfer (cesión) the SII knows of; null = the SII knows of none; absent = the
   * SII did not say (sales rows)
   */
  cesion?: RcvCesion | null;
}

export interface RcvCesion {
  rutCesionario: string;
  razonSocialCesionario: string;
  /** YYYY-MM-DD */
  fechaCesion: string;
}

export interface RcvRegistro {
  rutEmpresa: string;
  periodo: string;
  operacion: RcvOperacion;
  documentos: RcvDocumento[];
}

const OPERATION = 'rcv';

export async function readRcv(t: SiiTransport, q: RcvQuery): Promise<RcvRegistro> {
  const rut = splitRut(q.rutEmpresa, 'rutEmpresa');
  if (q.operacion !== 'ventas' && q.operacion !== 'compras')
    throw new RangeError(`operacion must be ventas or compras`);
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(q.periodo)) throw new RangeError(`bad periodo ${q.periodo}`);
  if (!q.token || /[\s;,"\\]/.test(q.token)) throw new RangeError('token is empty or not cookie-safe');
  const base = endpointsOf(t, q.env).baseUrl.replace(/\/+$/, '');
  if (base === REAL_SII_ENDPOINTS[q.env].baseUrl) {
    throw new SiiError(
      'protocol',
      `${OPERATION}: the SII's RCV calls are undocumented; this call needs a SII simulator (SII_BASE_URL) — nothing was sent`,
      { operation: OPERATION, retryable: false },
    );
  }
  const reply = await sendHttp({
    url: `${base}/rcv/${q.operacion}/${rut.body}-${rut.dv}/${q.periodo}`,
    method: 'GET',
    headers: { Accept: 'application/json', 'User-Agent': t.userAgent, Cookie: `TOKEN=${q.token}` },
    timeoutMs: q.timeoutMs ?? t.timeoutMs,
    ...(q.signal ? { signal: q.signal } : {}),
    operation: OPERATION,
  });
  return interpretRcvReply(reply, q.operacion);
}

export function interpretRcvReply(reply: HttpReply, operacion: RcvOperacion): RcvRegistro {
  const text = decodeBody(reply.body);
  const { status } = reply;
  const details = { operation: OPERATION, httpStatus: status, responseExcerpt: excerpt(text) };
  if (status >= 500 || status === 408 || status === 429)
    throw new SiiError('transient', `${OPERATION}: HTTP ${status} from the SII`, details);
  if (status === 401)
    throw new SiiError('auth', `${OPERATION}: the SII refused the token (HTTP 401)`, details);
  if (status >= 400)
    throw new SiiError('rejected', `${OPERATION}: the SII refused the read (HTTP ${status})`, {
      ...details,
      siiCode: status === 403 ? 'sin_permiso' : String(status),
    });
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new SiiError('protocol', `${OPERATION}: HTTP ${status} whose body is not JSON`, {
      ...details,
      cause: err,
    });
  }
  const o = v as Partial<RcvRegistro> | null;
  if (status !== 200 || !o || typeof o !== 'object' || !Array.isArray(o.documentos))
    throw new SiiError('protocol', `${OPERATION}: HTTP ${status} without documentos`, details);
  const documentos = o.documentos.map((raw): RcvDocumento => {
    const d = raw as unknown as Record<string, unknown>;
    const num = (k: string) => {
      const n = Number(d[k] ?? 0);
      if (!Number.isFinite(n)) throw new SiiError('protocol', `${OPERATION}: ${k} is not a number`, details);
      return n;
    };
    const str = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : '');
    const doc: RcvDocumento = {
      tipoDte: num('tipoDte'),
      folio: num('folio'),
      rutEmisor: str('rutEmisor'),
      rutReceptor: str('rutReceptor'),
      fchEmis: str('fchEmis'),
      fechaRecepcion: str('fechaRecepcion'),
      mntNeto: num('mntNeto'),
      mntExe: num('mntExe'),
      iva: num('iva'),
      mntTotal: num('mntTotal'),
      estado: str('estado'),
      eventos: Array.isArray(d.eventos) ? (d.eventos as unknown[]).map(String) : [],
    };
    if (d.cesion === null) doc.cesion = null;
    else if (d.cesion && typeof d.cesion === 'object') {
      const c = d.cesion as Record<string, unknown>;
      doc.cesion = {
        rutCesionario: String(c.rutCesionario ?? ''),
        razonSocialCesionario: String(c.razonSocialCesionario ?? ''),
        fechaCesion: String(c.fechaCesion ?? ''),
      };
    }
    if (!doc.tipoDte || !doc.folio || !doc.rutEmisor || !/^\d{4}-\d{2}-\d{2}$/.test(doc.fchEmis))
      throw new SiiError(
        'protocol',
        `${OPERATION}: a document without tipoDte, folio, rutEmisor or fchEmis`,
        details,
      );
    return doc;
  });
  return {
    rutEmpresa: String(o.rutEmpresa ?? ''),
    periodo: String(o.periodo ?? ''),
    operacion,
    documentos,
  };
}
