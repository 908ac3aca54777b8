import type { Middleware } from 'koa';

/** The methods some route of this service answers (api, dashboard, OAuth, MCP, probes). */
export const SERVED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Any other method (TRACE, CONNECT, PROPFIND…) on any path answers 405 with `Allow`, never a 404
 * that reads as "no such resource". The spec's error catalog has no code for it, so the answer
 * carries no error envelope, only the status and the header (RFC 9110 15.5.6).
 */
export function unsupportedMethods(): Middleware {
  const served = new Set<string>(SERVED_METHODS);
  const allow = SERVED_METHODS.join(', ');
  return async (ctx, next) => {
    if (served.has(ctx.method)) return next();
    ctx.status = 405;
    ctx.set('Allow', allow);
    ctx.body = '';
  };
}
