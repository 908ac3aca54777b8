/**
 * Folio grants (timbraje electrónico): the SII authorizes a range of folios of one document type
 * for an issuer and answers with the CAF (`<AUTORIZACION><CAF>…</CAF><RSASK>…`), which holds the
 * stamping private key.
 *
 * The real SII grants CAFs through a form of its web portal, not a web service (whether it can be
 * automated is UNCONFIRMED). This call speaks the SII simulator's documented stand-in
 * (packages/sii-simulator, "Folio grants"):
 *
 *   POST {base}/folios   Cookie: TOKEN=…   {"rutEmisor":"76123456-0","tipoDte":33,"cantidad":50}
 *   → 200 application/xml: the CAF; 401 token refused; 403 the user may not stamp for the issuer;
 *     422 a bad request (type, quantity above the SII's limit, RUT)
 *
 * Configured with the real SII's hosts it refuses before sending anything.
 *
 * Answers become: the CAF XML text (exactly as received, so its signatures still verify);
 * `auth` for 401 (a session renews the token once); `rejected` (not retryable) for 403 and the
 * other 4xx — `httpStatus` 403 with `siiCode` `sin_permiso` means the certificate's holder may
 * not stamp for the company; `transient` for network failures, timeouts, 408, 429, 5xx, HTML
 * pages and "Error 500"; `protocol` for anything else, including a 200 that is not a CAF.
 *
 * A transient failure with `requestSent: true` means the SII may have granted the range: asking
 * again may burn another range.
 */
import { REAL_SII_ENDPOINTS, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { sendHttp, type HttpReply } from './http';
import { splitRut } from './rut';
import { rejectNonXmlReply } from './soap';
import { endpointsOf, type CallOptions, type SiiTransport } from './transport';
import { childElements, decodeBody, excerpt, localName, parseXml } from './xml';

export interface FolioRequest extends CallOptions {
  env: SiiEnvironment;
  token: string;
  /** the issuer the folios are for, `12345678-9` */
  rutCompany: string;
  /** document type (33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112) */
  tipoDte: number;
  /** how many folios; the SII caps it per grant */
  cantidad: number;
}

export const FOLIOS_PATH = '/folios';
const OPERATION = 'folios';

/** Asks for a folio range; resolves to the CAF XML text. */
export async function requestFolios(t: SiiTransport, q: FolioRequest): Promise<string> {
  const rut = splitRut(q.rutCompany, 'rutCompany');
  if (!Number.isInteger(q.tipoDte) || q.tipoDte <= 0 || q.tipoDte > 999)
    throw new RangeError(`bad tipoDte ${q.tipoDte}`);
  if (!Number.isInteger(q.cantidad) || q.cantidad <= 0) throw new RangeError(`bad cantidad ${q.cantidad}`);
  if (!q.token || /[\s;,"\\]/.test(q.token)) throw new RangeError('token is empty or not cookie-safe');
  const base = endpointsOf(t, q.env).baseUrl.replace(/\/+$/, '');
  if (base === REAL_SII_ENDPOINTS[q.env].baseUrl) {
    throw new SiiError(
      'protocol',
      `${OPERATION}: the real SII grants folios only through its web portal; ` +
        'this call needs a SII simulator (SII_BASE_URL) — nothing was sent',
      { operation: OPERATION, retryable: false },
    );
  }
  const body = Buffer.from(
    JSON.stringify({ rutEmisor: `${rut.body}-${rut.dv}`, tipoDte: q.tipoDte, cantidad: q.cantidad }),
    'utf8',
  );
  const reply = await sendHttp({
    url: base + FOLIOS_PATH,
    method: 'POST',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      Accept: 'application/xml, text/xml',
      'User-Agent': t.userAgent,
      Cookie: `TOKEN=${q.token}`,
      'Content-Length': String(body.length),
    },
    body,
    timeoutMs: q.timeoutMs ?? t.timeoutMs,
    ...(q.signal ? { signal: q.signal } : {}),
    operation: OPERATION,
  });
  return interpretFolioReply(reply);
}

/** Reads a reply of the folio grant: the CAF XML, or the SiiError it means. */
export function interpretFolioReply(reply: HttpReply): string {
  const text = decodeBody(reply.body);
  const { status } = reply;
  if (status === 200) return readCaf(reply, text);
  const answer = jsonError(text);
  const details = {
    operation: OPERATION,
    httpStatus: status,
    ...(answer.error ? { siiCode: answer.error } : {}),
    ...(answer.message ? { glosa: answer.message } : {}),
    responseExcerpt: excerpt(text),
  };
  const said = answer.error ? ` ${answer.error}${answer.message ? `: ${answer.message}` : ''}` : '';
  if (status >= 500 || status === 408 || status === 429)
    return fail('transient', `HTTP ${status} from the SII${said}`, details);
  if (status === 401) return fail('auth', `the SII refused the token (HTTP 401${said})`, details);
  if (status === 403)
    return fail('rejected', `the certificate's holder may not stamp for the issuer (HTTP 403${said})`, {
      ...details,
      siiCode: answer.error ?? 'sin_permiso',
    });
  if (status >= 400) return fail('rejected', `the SII refused the grant (HTTP ${status}${said})`, details);
  return fail('protocol', `unexpected HTTP ${status}`, details);
}

function readCaf(reply: HttpReply, text: string): string {
  rejectNonXmlReply(reply, text, OPERATION);
  let root;
  try {
    root = parseXml(text).documentElement;
  } catch (err) {
    return fail('protocol', `HTTP 200 whose body is not well-formed XML (${(err as Error).message})`, {
      operation: OPERATION,
      httpStatus: reply.status,
      responseExcerpt: excerpt(text),
      cause: err,
    });
  }
  if (
    !root ||
    localName(root) !== 'AUTORIZACION' ||
    !childElements(root).some((c) => localName(c) === 'CAF')
  ) {
    return fail(
      'protocol',
      `HTTP 200 without a CAF (root ${root?.nodeName ?? 'none'}, expected AUTORIZACION)`,
      {
        operation: OPERATION,
        httpStatus: reply.status,
        // never a stamping private key in an error
        responseExcerpt: excerpt(text.replace(/<RSASK>[\s\S]*?(<\/RSASK>|$)/g, '<RSASK>…</RSASK>')),
      },
    );
  }
  return text;
}

/** `{error, message}` of the simulator's JSON error answers; empty for anything else. */
function jsonError(text: string): { error?: string; message?: string } {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null) return {};
    const o = v as Record<string, unknown>;
    return {
      ...(typeof o.error === 'string' && o.error ? { error: o.error } : {}),
      ...(typeof o.message === 'string' && o.message ? { message: o.message } : {}),
    };
  } catch {
    return {};
  }
}

function fail(
  kind: SiiError['kind'],
  message: string,
  options: ConstructorParameters<typeof SiiError>[2],
): never {
  throw new SiiError(kind, `${OPERATION}: ${message}`, options);
}
