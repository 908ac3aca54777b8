/**
 * The one error type of the SII client. Callers branch on `kind` and `retryable`, never on the
 * message:
 * - `transient`: the SII could not answer now (network failure, timeout, HTTP 5xx, an HTML error
 *   page, the bare text "Error 500", DTEUpload STATUS 9, QueryEstUp internal-error states).
 *   Retry with backoff.
 * - `auth`: the token (or the signed seed) was refused. A call made through
 *   `SiiClient.withToken` drops the cached token and retries once with a new one; when this
 *   reaches the caller, getting a token itself failed or the fresh token was refused too.
 * - `rejected`: the SII understood the request and said no (permission, schema, signature, a
 *   register WS codResp). Retrying the same request gives the same answer.
 * - `protocol`: the answer was not what the SII's protocol says (unparseable XML, a missing
 *   STATUS or ESTADO, an unknown shape). Never read as success.
 */
import { metrics } from '@dte/service-runtime';

export type SiiErrorKind = 'transient' | 'auth' | 'rejected' | 'protocol';

export interface SiiErrorOptions {
  /** default: true for transient, false otherwise */
  retryable?: boolean;
  /** the SII's own code when it gave one (STATUS, ESTADO, codResp, SOAP faultcode) */
  siiCode?: string;
  /** the SII's text that goes with the code (GLOSA, descResp, faultstring, DETAIL lines) */
  glosa?: string;
  /** HTTP status of the answer, when there was one */
  httpStatus?: number;
  /** which call failed, e.g. "getSeed", "DTEUpload" */
  operation?: string;
  /**
   * Only for failures after the request body was completely written (timeout, dropped
   * connection): the SII may have received and processed it. An uploader must not assume the
   * envelope was not registered.
   */
  requestSent?: boolean;
  /** the start of the reply body, for diagnosis (at most 500 characters) */
  responseExcerpt?: string;
  cause?: unknown;
}

export class SiiError extends Error {
  readonly kind: SiiErrorKind;
  readonly retryable: boolean;
  readonly siiCode?: string;
  readonly glosa?: string;
  readonly httpStatus?: number;
  readonly operation?: string;
  readonly requestSent?: boolean;
  readonly responseExcerpt?: string;

  constructor(kind: SiiErrorKind, message: string, options: SiiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SiiError';
    this.kind = kind;
    this.retryable = options.retryable ?? kind === 'transient';
    if (options.siiCode !== undefined) this.siiCode = options.siiCode;
    if (options.glosa !== undefined) this.glosa = options.glosa;
    if (options.httpStatus !== undefined) this.httpStatus = options.httpStatus;
    if (options.operation !== undefined) this.operation = options.operation;
    if (options.requestSent !== undefined) this.requestSent = options.requestSent;
    if (options.responseExcerpt !== undefined) this.responseExcerpt = options.responseExcerpt.slice(0, 500);
    metrics.siiErrors.inc({ operation: options.operation ?? 'unknown', kind });
  }
}

export function isSiiError(err: unknown): err is SiiError {
  return err instanceof SiiError;
}

/** true for an error that means "get a new token and try again" */
export function isTokenError(err: unknown): err is SiiError {
  return err instanceof SiiError && err.kind === 'auth';
}
