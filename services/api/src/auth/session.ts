import type { Context } from 'koa';
import type { Redis } from 'ioredis';
import { boundPasswordHashing, DEFAULT_LOGIN_GUARD, LoginGuard, SessionStore } from '@dte/accounts';
import type { Config } from '../config';

/**
 * The dashboard session cookie (one mechanism, issued by POST /auth/login and /auth/signup):
 * its value is an opaque random id of a server-side session kept in Redis by @dte/accounts'
 * SessionStore ({uid, org}, idle and absolute timeouts). The role is never in the session: each
 * request reads the membership (user, organization) from the database, so removing a member or
 * changing a role takes effect at once, and logout deletes the session everywhere.
 *
 * Flags: HttpOnly, SameSite=Strict, Path=/; on https (SESSION_COOKIE_SECURE, on by default when
 * PUBLIC_BASE_URL is https) also Secure and the `__Host-` name prefix, which browsers accept only
 * from a secure origin, without Domain, for Path=/ (so no subdomain can plant or shadow it).
 */
export const SESSION_COOKIE = 'dte_session';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

export function sessionCookieName(config: Pick<Config, 'sessionCookieSecure'>): string {
  return config.sessionCookieSecure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

function cookieHeader(config: Config, value: string, maxAgeSec: number): string {
  const parts = [
    `${sessionCookieName(config)}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${maxAgeSec}`,
  ];
  if (config.sessionCookieSecure) parts.push('Secure');
  return parts.join('; ');
}

export function setSessionCookie(ctx: Context, config: Config, id: string): void {
  ctx.append('Set-Cookie', cookieHeader(config, id, config.sessionAbsoluteSec));
  ctx.set('Cache-Control', 'no-store');
}

export function clearSessionCookie(ctx: Context, config: Config): void {
  ctx.append('Set-Cookie', cookieHeader(config, '', 0));
}

export function readSessionCookie(ctx: Context, config: Config): string | undefined {
  return ctx.cookies.get(sessionCookieName(config)) || undefined;
}

const stores = new WeakMap<Redis, { sessions: SessionStore; guard: LoginGuard }>();

/** The session store and login guard of an api (one per Redis connection). */
export function accountStores(deps: { redis: Redis; config: Config }): {
  sessions: SessionStore;
  guard: LoginGuard;
} {
  let s = stores.get(deps.redis);
  if (!s) {
    s = {
      sessions: new SessionStore(deps.redis, {
        idleSec: deps.config.sessionIdleSec,
        absoluteSec: deps.config.sessionAbsoluteSec,
      }),
      guard: new LoginGuard(deps.redis, {
        ...DEFAULT_LOGIN_GUARD,
        maxFailures: deps.config.loginMaxFailures,
        lockSec: deps.config.loginLockSec,
        perIpPerMinute: deps.config.loginPerAddressPerMinute,
        globalPerMinute: deps.config.loginGlobalPerMinute,
        signupPerIpPerHour: deps.config.signupPerAddressPerHour,
        signupGlobalPerMinute: deps.config.signupGlobalPerMinute,
      }),
    };
    // the process's bound on concurrent scrypt hashes (sign-up, login, password changes)
    boundPasswordHashing({
      concurrency: deps.config.passwordHashConcurrency,
      queue: deps.config.passwordHashQueue,
    });
    stores.set(deps.redis, s);
  }
  return s;
}
