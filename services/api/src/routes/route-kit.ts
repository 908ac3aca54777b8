import type { Context, Middleware } from 'koa';
import type { ApiDeps, Principal, RouteKit } from '../context';
import { authenticate, authorize, presentedKey } from '../auth/authenticate';
import { checkSessionCsrf } from '../auth/csrf';
import { accountStores, readSessionCookie } from '../auth/session';
import {
  admitApiKeyRequest,
  applyRateLimit,
  enforceRateLimit,
  recordKeyFailure,
  rememberValidKey,
} from '../auth/rate-limit';
import { ApiError } from '@dte/error-catalog';
import { writeInflightLimiter, type InflightLimiter } from '../http/inflight-limit';
import { parseJsonBody } from '../http/json-body';
import { validateBody } from '@dte/http-contract';

/** answers that count as a failed authentication of a presented key (its address and prefix) */
const KEY_FAILURES = new Set(['invalid_api_key', 'api_key_revoked', 'api_key_expired']);

export function principalOf(ctx: Context): Principal {
  return ctx.state.principal as Principal;
}

/** One write cap per api instance (createRouteKit runs more than once for the same deps). */
const limiters = new WeakMap<ApiDeps, InflightLimiter>();
function inflightLimiterFor(deps: ApiDeps): InflightLimiter {
  let l = limiters.get(deps);
  if (!l) limiters.set(deps, (l = writeInflightLimiter(deps.config)));
  return l;
}

export function createRouteKit(deps: ApiDeps): RouteKit {
  const now = deps.clock ?? (() => new Date());
  const inflight = inflightLimiterFor(deps);
  const chain: RouteKit['chain'] = (def) => {
    const out: Middleware[] = [];
    if (def.auth !== 'none') {
      out.push(async (ctx, next) => {
        const at = now();
        const sessionOnly = def.auth === 'session' || def.auth === 'session_user';
        const windowSec = deps.config.rateLimitWindowSec;
        // a presented key is refused before its lookup when its address or its prefix keeps
        // failing and it is not known to exist; else it is counted in the same round trip to Redis
        const key = sessionOnly ? undefined : presentedKey(ctx.get('Authorization') || undefined);
        const admitted = key
          ? await admitApiKeyRequest(
              deps.redis,
              ctx.ip,
              key,
              deps.config.authFailureMax,
              { max: deps.config.rateLimitMax, windowSec },
              at,
            )
          : undefined;
        const principal = await authenticate(ctx, deps.dataSource, {
          allowBearer: !sessionOnly,
          allowSession: def.auth !== 'bearer',
          requireOrg: def.auth !== 'session_user',
          sessions: accountStores(deps).sessions,
          sessionId: readSessionCookie(ctx, deps.config),
          now: at,
          preload: def.preload,
        }).catch(async (err: unknown) => {
          if (key && err instanceof ApiError && KEY_FAILURES.has(err.code)) {
            await recordKeyFailure(deps.redis, ctx.ip, key, at).catch(() => undefined);
          }
          throw err;
        });
        ctx.state.principal = principal;
        // the organization's own limit, else RATE_LIMIT_MAX (RateLimit-Limit shows which)
        const limit = { max: principal.rateLimitMax ?? deps.config.rateLimitMax, windowSec };
        if (admitted && principal.kind === 'api_key') {
          if (!admitted.known) await rememberValidKey(deps.redis, key!.hash).catch(() => undefined);
          applyRateLimit(ctx, admitted.count, limit, at);
        } else await enforceRateLimit(ctx, deps.redis, principal.actorId, limit, at);
        if (principal.kind === 'session') checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        authorize(principal, def.scope, def.roles);
        // only authenticated writes hold the cap, each organization at most its share
        const release = inflight.admit(ctx.method, principal.organizationId || principal.actorId);
        try {
          await next();
        } finally {
          release?.();
        }
      });
    }
    if (def.body?.kind === 'json') {
      const schema = def.body.schema;
      const byHandler = def.body.validatedBy === 'handler';
      out.push(async (ctx, next) => {
        const parsed = await parseJsonBody(ctx);
        ctx.state.body = byHandler ? parsed : validateBody(schema, parsed);
        await next();
      });
    }
    return out;
  };
  return { chain, now };
}
