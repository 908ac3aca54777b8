import type Koa from 'koa';
import type { ApiDeps } from '../context';

/**
 * Probes for orchestrators, outside the versioned API: GET /healthz answers 200 while the
 * process serves requests; GET /readyz also checks PostgreSQL and Redis and answers 503 with
 * the failing dependency otherwise (its name and `error: "unavailable"`, never the driver's text). They carry X-Request-Id like every other response.
 */
export function healthProbes(deps: Pick<ApiDeps, 'dataSource' | 'redis'>): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) return next();
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const failing: { name: string; error: string }[] = [];
    const check = async (name: string, probe: () => Promise<unknown>) => {
      try {
        await probe();
      } catch {
        // never the driver's text (it can name hosts, users, schemas or values): a fixed word
        failing.push({ name, error: 'unavailable' });
      }
    };
    await check('postgresql', () => deps.dataSource.query('SELECT 1'));
    await check('redis', () => deps.redis.ping());
    ctx.status = failing.length === 0 ? 200 : 503;
    ctx.body = failing.length === 0 ? { status: 'ready' } : { status: 'not_ready', failing };
  };
}
