import type { Context } from 'koa';
import { ApiError } from '@dte/error-catalog';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(value: string): string | null {
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

/**
 * Cross-origin protection of session-authenticated mutations (never applied to Bearer keys,
 * which a browser does not attach by itself):
 * - `Sec-Fetch-Site: cross-site` → csrf_blocked;
 * - an Origin (or, without it, a Referer) outside the allowed origins → csrf_origin_mismatch;
 * - neither Origin nor Referer → csrf_blocked (the request's origin cannot be proven).
 * The api's own origin (the dashboard it serves under /dashboard) is always allowed: a browser
 * sends the Host it connects to, so a cross-site page cannot make Origin equal it.
 */
export function checkSessionCsrf(ctx: Context, allowedOrigins: readonly string[]): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  if (ctx.get('Sec-Fetch-Site') === 'cross-site') {
    throw new ApiError('csrf_blocked', 'Cross-site request refused for a session.');
  }
  const origin = ctx.get('Origin') || null;
  const referer = ctx.get('Referer') || null;
  const claimed = origin ?? (referer ? originOf(referer) : null);
  if (!origin && !referer) {
    throw new ApiError('csrf_blocked', 'A session mutation must carry an Origin header.', {
      hint: 'Browsers send Origin on POST, PUT and DELETE; scripts should use an API key instead.',
    });
  }
  const own = `${ctx.protocol}://${ctx.host}`;
  if (!claimed || (claimed !== own && !allowedOrigins.includes(claimed))) {
    throw new ApiError('csrf_origin_mismatch', 'The request origin is not the dashboard.', {
      detail: { origin: claimed ?? referer },
    });
  }
}
