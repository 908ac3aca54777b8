/**
 * What every call needs to reach the SII: the endpoints of both environments, the deadlines and
 * the User-Agent. Per call, the caller may pass an AbortSignal and/or its own timeout.
 */
import type { SiiEndpoints, SiiEnvironment, SiiEnvironmentEndpoints } from './endpoints';
import { sendHttp, type HttpReply } from './http';

export interface CallOptions {
  /** cancels the call (the promise rejects with a transient SiiError) */
  signal?: AbortSignal;
  /** deadline of this call in ms; default: the client's timeout for this kind of call */
  timeoutMs?: number;
}

export interface SiiTransport {
  endpoints: SiiEndpoints;
  /** deadline of a SOAP call (seed, token, status queries, register WS) */
  timeoutMs: number;
  /** deadline of a DTEUpload POST (large envelopes) */
  uploadTimeoutMs: number;
  /** sent on every request; the SII's clients all send a browser-like `compatible; PROG 1.0` UA */
  userAgent: string;
}

/**
 * The User-Agent every known SII client sends (the manual's sample request, Odoo, LibreDTE): a
 * browser-like string containing `compatible; PROG 1.0`. Whether the SII refuses others is
 * UNCONFIRMED, so the client never sends anything else by default.
 */
export const DEFAULT_USER_AGENT = 'Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)';
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_UPLOAD_TIMEOUT_MS = 120_000;

export function endpointsOf(t: SiiTransport, env: SiiEnvironment): SiiEnvironmentEndpoints {
  const e = t.endpoints[env];
  if (!e) throw new RangeError(`unknown SII environment ${JSON.stringify(env)} (expected cert or prod)`);
  return e;
}

export function postSoap(
  t: SiiTransport,
  url: string,
  envelope: string,
  operation: string,
  opts: CallOptions,
  extraHeaders: Record<string, string> = {},
): Promise<HttpReply> {
  const body = Buffer.from(envelope, 'utf8');
  return sendHttp({
    url,
    method: 'POST',
    headers: {
      'Content-Type': 'text/xml; charset=utf-8',
      Accept: 'text/xml, application/soap+xml',
      SOAPAction: '""',
      'User-Agent': t.userAgent,
      ...extraHeaders,
      'Content-Length': String(body.length),
    },
    body,
    timeoutMs: opts.timeoutMs ?? t.timeoutMs,
    ...(opts.signal ? { signal: opts.signal } : {}),
    operation,
  });
}
