import type { Middleware } from 'koa';

/**
 * Headers every answer of the api carries (issue 28): `X-Content-Type-Options: nosniff`, so a
 * browser never runs an answer as another type than the one declared (a JSON error echoing input,
 * a stored XML), and, when the api is served over https (PUBLIC_BASE_URL), HSTS
 * (`Strict-Transport-Security: max-age=HSTS_MAX_AGE_SEC; includeSubDomains`) so browsers never
 * come back over plain http. Set before anything else runs, so errors carry them too.
 */
export function securityHeaders(opts: { https: boolean; hstsMaxAgeSec: number }): Middleware {
  const hsts =
    opts.https && opts.hstsMaxAgeSec > 0 ? `max-age=${opts.hstsMaxAgeSec}; includeSubDomains` : undefined;
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (hsts) ctx.set('Strict-Transport-Security', hsts);
    await next();
  };
}
