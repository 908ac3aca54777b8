import { CHECK_TIMEOUT_MS, withDeadline } from '@dte/service-runtime';
import type Koa from 'koa';
import type { ApiDeps } from '../context';

/**
 * Probes for orchestrators, outside the versioned API: GET /healthz answers 200 while the
 * process serves requests; GET /readyz also checks PostgreSQL and Redis (and Kafka when the
 * process runs the pipeline: deps.readiness) and answers 503 with the failing dependency otherwise
 * (its name and `error: "unavailable"`, never the driver's text). They carry X-Request-Id like every other response.
 */
export function healthProbes(deps: Pick<ApiDeps, 'dataSource' | 'redis' | 'readiness'>): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) return next();
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const failing: { name: string; error: string }[] = [];
    const check = async (name: string, probe: () => Promise<unknown>) => {
      try {
        // a stopped dependency may not refuse at once (the clients queue and reconnect)
        await withDeadline(probe(), CHECK_TIMEOUT_MS, name);
      } catch {
        // never the driver's text (it can name hosts, users, schemas or values): a fixed word
        failing.push({ name, error: 'unavailable' });
      }
    };
    await Promise.all([
      check('postgresql', () => deps.dataSource.query('SELECT 1')),
      check('redis', () => deps.redis.ping()),
      ...(deps.readiness ?? []).map((c) => check(c.name, c.check)),
    ]);
    ctx.status = failing.length === 0 ? 200 : 503;
    ctx.body = failing.length === 0 ? { status: 'ready' } : { status: 'not_ready', failing };
  };
}
