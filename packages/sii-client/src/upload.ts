/**
 * DTEUpload (PROTOCOL.md §3): a multipart/form-data POST of an EnvioDTE to
 * `/cgi_dte/UPL/DTEUpload` with the token in `Cookie: TOKEN=…`, answered by a plain XML
 * `RECEPCIONDTE` document with STATUS and, when STATUS is 0, TRACKID.
 *
 * `uploadEnvio` returns an `UploadOutcome` for every answer and for every failure to get one;
 * it throws only a RangeError for bad input (nothing is sent then).
 */
import { createHash } from 'node:crypto';

import { serviceUrl, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { sendHttp, type HttpReply } from './http';
import { splitRut } from './rut';
import { protocol, rejectNonXmlReply, transientHttp } from './soap';
import { endpointsOf, type CallOptions, type SiiTransport } from './transport';
import { childElements, childText, decodeBody, excerpt, findChild, localName, parseXml } from './xml';

export interface UploadEnvioInput extends CallOptions {
  env: SiiEnvironment;
  token: string;
  /** RUN of the certificate owner whose certificate got the token (`12345678-9`) */
  rutSender: string;
  /** the issuing company (`76543210-3`) */
  rutCompany: string;
  /** the signed EnvioDTE bytes exactly as signed (ISO-8859-1); never re-serialized */
  xml: Buffer;
  /** name of the file part; default `EnvioDTE-<first 16 hex of its SHA-256>.xml` */
  filename?: string;
}

/** The RECEPCIONDTE reply, as read. */
export interface RecepcionDte {
  status: number;
  /** only with STATUS 0 (and, when the SII gives it, with a repeated send); kept as text */
  trackId?: string;
  rutSender?: string;
  rutCompany?: string;
  file?: string;
  /** `YYYY-MM-DD HH:MM:SS` as the SII writes it */
  timestamp?: string;
  /** DETAIL/ERROR lines (e.g. schema errors) */
  errors: string[];
  raw: string;
}

export type UploadOutcome =
  | { kind: 'accepted'; trackId: string; receipt: RecepcionDte }
  /** STATUS 99 ("already received before", LibreDTE only: UNCONFIRMED officially) */
  | { kind: 'repeated'; status: number; trackId?: string; receipt: RecepcionDte; error: SiiError }
  /** STATUS 1 (sender may not send for the company) or 6 (company not authorized to send) */
  | { kind: 'no_permission'; status: 1 | 6; receipt: RecepcionDte; error: SiiError }
  /** STATUS 5: not authenticated (the token was refused) */
  | { kind: 'auth'; status: 5; receipt: RecepcionDte; error: SiiError }
  /** STATUS 7 (schema) or 8 (signature) */
  | {
      kind: 'invalid';
      reason: 'schema' | 'signature';
      status: 7 | 8;
      errors: string[];
      receipt: RecepcionDte;
      error: SiiError;
    }
  /** STATUS 2 (file too big or too small) or 3 (file truncated) */
  | { kind: 'size'; status: 2 | 3; receipt: RecepcionDte; error: SiiError }
  /**
   * STATUS 9 (system blocked) or another undocumented STATUS (the manual: "internal error"),
   * HTTP 5xx, an HTML page, "Error 500", a timeout or a network failure. `error.requestSent`
   * says whether the envelope had been completely sent: if so, the SII may have registered it.
   */
  | { kind: 'transient'; status?: number; receipt?: RecepcionDte; error: SiiError }
  /** an answer that is not a readable RECEPCIONDTE (e.g. no STATUS): never read as success */
  | { kind: 'protocol'; receipt?: RecepcionDte; error: SiiError };

const OPERATION = 'DTEUpload';

/** Headers of the SII's sample request that the known clients copy (besides UA and Cookie). */
const UPLOAD_ACCEPT =
  'image/gif, image/x-xbitmap, image/jpeg, image/pjpeg, application/vnd.ms-powerpoint, application/ms-excel, application/msword, */*';

export async function uploadEnvio(t: SiiTransport, input: UploadEnvioInput): Promise<UploadOutcome> {
  const sender = splitRut(input.rutSender, 'rutSender');
  const company = splitRut(input.rutCompany, 'rutCompany');
  if (!Buffer.isBuffer(input.xml) || input.xml.length === 0)
    throw new RangeError('xml must be a non-empty Buffer');
  if (!input.token || /[\s;,"\\]/.test(input.token))
    throw new RangeError('token is empty or not cookie-safe');
  const filename = input.filename ?? defaultFilename(input.xml);
  if (/[\r\n"]/.test(filename))
    throw new RangeError(`filename may not hold quotes or line breaks: ${filename}`);

  const { body, contentType } = await multipartBody([
    ['rutSender', sender.body],
    ['dvSender', sender.dv],
    ['rutCompany', company.body],
    ['dvCompany', company.dv],
    ['archivo', { bytes: input.xml, filename, type: 'text/xml' }],
  ]);
  const url = serviceUrl(endpointsOf(t, input.env), 'dteUpload');
  let reply: HttpReply;
  try {
    reply = await sendHttp({
      url,
      method: 'POST',
      headers: {
        Accept: UPLOAD_ACCEPT,
        'Accept-Language': 'es-cl',
        'User-Agent': t.userAgent,
        'Cache-Control': 'no-cache',
        Cookie: `TOKEN=${input.token}`,
        'Content-Type': contentType,
        // explicit: requests without it reportedly failed at the SII (Odoo)
        'Content-Length': String(body.length),
      },
      body,
      timeoutMs: input.timeoutMs ?? t.uploadTimeoutMs,
      ...(input.signal ? { signal: input.signal } : {}),
      operation: OPERATION,
    });
  } catch (err) {
    if (err instanceof SiiError)
      return err.kind === 'transient' ? { kind: 'transient', error: err } : { kind: 'protocol', error: err };
    throw err;
  }
  return interpretUploadReply(reply);
}

/** Reads an HTTP reply of DTEUpload into an outcome (exported for the tests of recorded replies). */
export function interpretUploadReply(reply: HttpReply): UploadOutcome {
  let receipt: RecepcionDte;
  try {
    receipt = parseRecepcionDte(reply);
  } catch (err) {
    if (!(err instanceof SiiError)) throw err;
    return err.kind === 'transient' ? { kind: 'transient', error: err } : { kind: 'protocol', error: err };
  }
  const { status } = receipt;
  const err = (kind: SiiError['kind'], text: string, retryable?: boolean): SiiError =>
    new SiiError(kind, `${OPERATION}: STATUS ${status} ${text}`, {
      operation: OPERATION,
      siiCode: String(status),
      httpStatus: reply.status,
      ...(receipt.errors.length ? { glosa: receipt.errors.join('\n') } : {}),
      ...(retryable === undefined ? {} : { retryable }),
      responseExcerpt: excerpt(receipt.raw),
    });
  switch (status) {
    case 0:
      if (!receipt.trackId) {
        return { kind: 'protocol', receipt, error: err('protocol', 'without a TRACKID') };
      }
      return { kind: 'accepted', trackId: receipt.trackId, receipt };
    case 1:
      return {
        kind: 'no_permission',
        status,
        receipt,
        error: err('rejected', 'the sender may not send for the company'),
      };
    case 6:
      return {
        kind: 'no_permission',
        status,
        receipt,
        error: err('rejected', 'the company is not authorized to send'),
      };
    case 5:
      return { kind: 'auth', status, receipt, error: err('auth', 'not authenticated (token refused)') };
    case 7:
      return {
        kind: 'invalid',
        reason: 'schema',
        status,
        errors: receipt.errors,
        receipt,
        error: err('rejected', 'invalid schema'),
      };
    case 8:
      return {
        kind: 'invalid',
        reason: 'signature',
        status,
        errors: receipt.errors,
        receipt,
        error: err('rejected', 'signature error'),
      };
    case 2:
      return {
        kind: 'size',
        status,
        receipt,
        error: err('rejected', 'file size error (too big or too small)'),
      };
    case 3:
      return { kind: 'size', status, receipt, error: err('rejected', 'file truncated') };
    case 99:
      return {
        kind: 'repeated',
        status,
        ...(receipt.trackId ? { trackId: receipt.trackId } : {}),
        receipt,
        error: err('rejected', 'the envelope was already received before'),
      };
    case 9:
      return { kind: 'transient', status, receipt, error: err('transient', 'system blocked') };
    default:
      return {
        kind: 'transient',
        status,
        receipt,
        error: err('transient', '(undocumented: internal error)'),
      };
  }
}

/** RECEPCIONDTE → RecepcionDte; a missing or non-numeric STATUS is a protocol error. */
export function parseRecepcionDte(reply: HttpReply): RecepcionDte {
  const text = decodeBody(reply.body);
  rejectNonXmlReply(reply, text, OPERATION);
  let root;
  try {
    root = parseXml(text).documentElement!;
  } catch (err) {
    if (reply.status >= 500) throw transientHttp(OPERATION, reply, text);
    throw new SiiError(
      'protocol',
      `${OPERATION}: the reply is not well-formed XML (${(err as Error).message})`,
      {
        operation: OPERATION,
        httpStatus: reply.status,
        responseExcerpt: excerpt(text),
        cause: err,
      },
    );
  }
  if (localName(root) !== 'RECEPCIONDTE') {
    if (reply.status >= 500) throw transientHttp(OPERATION, reply, text);
    throw protocol(OPERATION, `expected RECEPCIONDTE, got ${root.nodeName}`, reply, text);
  }
  const statusText = childText(root, 'STATUS');
  if (statusText === undefined || !/^-?\d+$/.test(statusText)) {
    throw protocol(
      OPERATION,
      statusText === undefined
        ? 'RECEPCIONDTE without STATUS'
        : `non-numeric STATUS ${JSON.stringify(statusText)}`,
      reply,
      text,
    );
  }
  const trackId = childText(root, 'TRACKID');
  if (trackId !== undefined && trackId !== '' && !/^\d+$/.test(trackId)) {
    throw protocol(OPERATION, `non-numeric TRACKID ${JSON.stringify(trackId)}`, reply, text);
  }
  const detail = findChild(root, 'DETAIL');
  const errors = detail
    ? childElements(detail)
        .map((e) => (e.textContent ?? '').trim())
        .filter(Boolean)
    : [];
  const out: RecepcionDte = { status: Number(statusText), errors, raw: text };
  if (trackId) out.trackId = trackId;
  const optional: [keyof RecepcionDte, string][] = [
    ['rutSender', 'RUTSENDER'],
    ['rutCompany', 'RUTCOMPANY'],
    ['file', 'FILE'],
    ['timestamp', 'TIMESTAMP'],
  ];
  for (const [key, tag] of optional) {
    const v = childText(root, tag);
    if (v) (out as unknown as Record<string, string>)[key] = v;
  }
  return out;
}

function defaultFilename(xml: Buffer): string {
  return `EnvioDTE-${createHash('sha256').update(xml).digest('hex').slice(0, 16)}.xml`;
}

type Part = string | { bytes: Buffer; filename: string; type: string };

/**
 * multipart/form-data in the given field order, encoded by the platform's FormData (undici), so
 * that the exact bytes and their length are known before sending.
 */
export async function multipartBody(parts: [string, Part][]): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [name, part] of parts) {
    if (typeof part === 'string') form.append(name, part);
    else form.append(name, new Blob([part.bytes], { type: part.type }), part.filename);
  }
  const request = new Request('http://multipart.invalid/', { method: 'POST', body: form });
  const body = Buffer.from(await request.arrayBuffer());
  const contentType = request.headers.get('content-type');
  if (!contentType?.startsWith('multipart/form-data; boundary='))
    throw new Error('FormData gave no multipart boundary');
  return { body, contentType };
}
