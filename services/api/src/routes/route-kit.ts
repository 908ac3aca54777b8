import type { Context, Middleware } from 'koa';
import type { ApiDeps, Principal, RouteDef } from '../context';
import { authenticate, authorize, presentedKeyHash } from '../auth/authenticate';
import { checkSessionCsrf } from '../auth/csrf';
import { accountStores, readSessionCookie } from '../auth/session';
import {
  admitApiKeyRequest,
  applyRateLimit,
  enforceRateLimit,
  recordAuthFailure,
  refuseAddressAfterFailures,
} from '../auth/rate-limit';
import { ApiError } from '../http/api-error';

/** answers that count as a failed authentication of the client address */
const AUTH_FAILURES = new Set(['unauthorized', 'invalid_api_key', 'api_key_revoked', 'api_key_expired']);
import { parseJsonBody } from '../http/json-body';
import { validateBody } from '../http/validate';

/** The building blocks of a route, shared with routes mounted by other parts (the /dtes routes). */
export interface RouteKit {
  /** middleware chain for a route definition: auth, rate limit, CSRF, scope/role, JSON body */
  chain(def: Pick<RouteDef, 'auth' | 'scope' | 'roles' | 'body' | 'preload'>): Middleware[];
  now(): Date;
}

export function principalOf(ctx: Context): Principal {
  return ctx.state.principal as Principal;
}

export function createRouteKit(deps: ApiDeps): RouteKit {
  const now = deps.clock ?? (() => new Date());
  const chain: RouteKit['chain'] = (def) => {
    const out: Middleware[] = [];
    if (def.auth !== 'none') {
      out.push(async (ctx, next) => {
        const at = now();
        const sessionOnly = def.auth === 'session' || def.auth === 'session_user';
        const limit = { max: deps.config.rateLimitMax, windowSec: deps.config.rateLimitWindowSec };
        // an address that keeps failing is refused before any key lookup; a request with an API
        // key is also counted against that key in the same round trip to Redis
        const keyHash = sessionOnly ? undefined : presentedKeyHash(ctx.get('Authorization') || undefined);
        const keyCount = keyHash
          ? await admitApiKeyRequest(deps.redis, ctx.ip, keyHash, deps.config.authFailureMax, limit, at)
          : await refuseAddressAfterFailures(deps.redis, ctx.ip, deps.config.authFailureMax, at).then(
              () => undefined,
            );
        const principal = await authenticate(ctx, deps.dataSource, {
          allowBearer: !sessionOnly,
          allowSession: def.auth !== 'bearer',
          requireOrg: def.auth !== 'session_user',
          sessions: accountStores(deps).sessions,
          sessionId: readSessionCookie(ctx, deps.config),
          now: at,
          preload: def.preload,
        }).catch(async (err: unknown) => {
          if (err instanceof ApiError && AUTH_FAILURES.has(err.code)) {
            await recordAuthFailure(deps.redis, ctx.ip, at).catch(() => undefined);
          }
          throw err;
        });
        ctx.state.principal = principal;
        if (keyCount !== undefined && principal.kind === 'api_key') applyRateLimit(ctx, keyCount, limit, at);
        else await enforceRateLimit(ctx, deps.redis, principal.actorId, limit, at);
        if (principal.kind === 'session') checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        authorize(principal, def.scope, def.roles);
        await next();
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
