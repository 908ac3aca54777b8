import { catalogEntry, docsUrl, isServiceError, type ValidationIssue, ApiError } from '@dte/error-catalog';
import type { Context, Middleware } from 'koa';
import type { Logger } from '@dte/service-runtime';
import { databaseError } from '@dte/database';

/** The error body of the spec (Resources > Error envelope), field for field. */
export interface ErrorEnvelope {
  code: string;
  message: string;
  request_id: string;
  hint?: string;
  next_action?: string;
  detail?: Record<string, unknown>;
  docs_url?: string;
  issues?: ValidationIssue[];
  [field: string]: unknown;
}

export function toEnvelope(
  thrown: unknown,
  requestId: string,
  catalogUrl: string,
): { status: number; body: ErrorEnvelope } {
  const err = isServiceError(thrown) ? thrown : (databaseError(thrown) ?? thrown);
  if (!isServiceError(err) || !catalogEntry(err.code)) {
    // Anything that is not a documented ServiceError is a bug: say so, show nothing of it.
    return {
      status: 500,
      body: {
        code: 'internal_error',
        message: 'Internal error. Quote the request_id when contacting support.',
        request_id: requestId,
        docs_url: docsUrl('internal_error', catalogUrl),
      },
    };
  }
  const entry = catalogEntry(err.code)!;
  const body: ErrorEnvelope = { code: err.code, message: err.message, request_id: requestId };
  // the spec's "body <field>" of some codes (never overriding an envelope field)
  if (err.bodyFields) {
    for (const [k, v] of Object.entries(err.bodyFields)) if (!(k in body)) body[k] = v;
  }
  if (err instanceof ApiError && err.hint) body.hint = err.hint;
  const suppressed = err instanceof ApiError && err.withoutNextAction;
  const nextAction = suppressed ? null : (err.nextAction ?? entry.nextAction);
  if (nextAction) body.next_action = nextAction;
  if (err.detail && Object.keys(err.detail).length > 0) body.detail = err.detail;
  const link = docsUrl(err.code, catalogUrl);
  if (link) body.docs_url = link;
  if (err.code === 'validation_failed') body.issues = err.issues ?? [];
  return { status: entry.http, body };
}

/**
 * Turns every thrown error into the envelope with the catalog's status; an unmatched route
 * becomes 404 not_found. 5xx are logged with the request id; the body never shows internals.
 */
export function errorEnvelope(opts: { catalogUrl: string; logger: Logger }): Middleware {
  const write = (ctx: Context, err: unknown) => {
    const { status, body } = toEnvelope(err, ctx.state.requestId as string, opts.catalogUrl);
    if (status >= 500) opts.logger.error({ err, requestId: ctx.state.requestId, path: ctx.path }, body.code);
    // 429 rate_limit and 503 sii_unavailable (backpressure, @dte/emission backlog-gate.ts) say when to retry
    if (
      isServiceError(err) &&
      typeof err.detail?.retryAfterSec === 'number' &&
      (status === 429 || status === 503)
    ) {
      ctx.set('Retry-After', String(err.detail.retryAfterSec));
    }
    ctx.status = status;
    ctx.type = 'application/json';
    ctx.body = body;
  };
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        write(ctx, new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`));
      }
    } catch (err) {
      write(ctx, err);
    }
  };
}
