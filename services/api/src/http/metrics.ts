import { metrics, renderMetrics } from '@dte/service-runtime';
import type Koa from 'koa';

/** Emission route whose outcome feeds dte_emissions_total. */
const EMISSION_ROUTE = '/api/v1/dtes';
const TIPO = /^\d{2,3}$/;

/**
 * GET /metrics (Prometheus text of @dte/service-runtime's registry, outside the versioned API),
 * and the timing of every request: dte_http_request_duration_seconds by method, route pattern
 * (`/api/v1/dtes/:id`, never the raw path, so ids do not become series; `unmatched` for a 404
 * outside the router) and status; for POST /api/v1/dtes also dte_emissions_total by tipo_dte and
 * outcome (`issued`, or the catalog error code of the answer). It runs outermost, so the status
 * is the one the error envelope gave.
 */
export function httpMetrics(): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/metrics') {
      const { contentType, body } = await renderMetrics();
      ctx.type = contentType;
      ctx.body = body;
      return;
    }
    const t0 = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpRequestDuration.observe(
        { method: ctx.method, route: String(route), status: String(ctx.status) },
        seconds,
      );
      if (ctx.method === 'POST' && route === EMISSION_ROUTE) {
        metrics.emissions.inc({ tipo_dte: tipoOf(ctx), outcome: outcomeOf(ctx) });
      }
    }
  };
}

function tipoOf(ctx: Koa.Context): string {
  const body = (ctx.state as { body?: { tipo_dte?: unknown } }).body;
  const tipo = body && typeof body === 'object' ? String(body.tipo_dte) : '';
  return TIPO.test(tipo) ? tipo : 'unknown';
}

function outcomeOf(ctx: Koa.Context): string {
  if (ctx.status < 400) return 'issued';
  const code = (ctx.body as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[a-z0-9_.]{1,64}$/.test(code) ? code : `http_${ctx.status}`;
}
