import type { Context } from 'koa';
import type { Redis } from 'ioredis';
import { ApiError } from '@dte/error-catalog';

/**
 * Sliding-window rate limit in Redis, shared by every api replica: one counter per actor (API
 * key or session user) per fixed window, `rl:<actor>:<window index>`, and the estimate
 * `previous × (time left of the previous window inside the last windowSec) + current`, so a burst
 * at a window's edge cannot pass twice the limit. Over it: 429 rate_limit with
 * detail.retryAfterSec and Retry-After; RateLimit-Limit / RateLimit-Remaining tell the client
 * where it stands. Redis not answering: 503 db.unavailable (detail.dependency "redis").
 */
export async function enforceRateLimit(
  ctx: Context,
  redis: Redis,
  actorId: string,
  limit: { max: number; windowSec: number },
  now: Date,
): Promise<void> {
  applyRateLimit(ctx, await slidingCount(redis, `rl:${actorId}`, limit.windowSec, now), limit, now);
}

/** The caller's count in its window as RateLimit headers, and 429 rate_limit when over the limit. */
export function applyRateLimit(
  ctx: Context,
  count: number,
  limit: { max: number; windowSec: number },
  now: Date,
): void {
  ctx.set('RateLimit-Limit', String(limit.max));
  ctx.set('RateLimit-Remaining', String(Math.max(0, Math.floor(limit.max - count))));
  ctx.set('RateLimit-Reset', String(secondsToWindowEnd(limit.windowSec, now)));
  if (count > limit.max) throw tooMany(limit, now);
}

/** What a request presents as an API key: its hash (what its row is found by) and display prefix. */
export interface PresentedKey {
  hash: string;
  /** `sk_<env>_` and the first 8 characters of the secret, as api_keys.prefix shows it */
  prefix: string;
}

/** A key that authenticated is remembered this long (refreshed by each use) as known to exist. */
export const KNOWN_KEY_TTL_SEC = 30 * 86400;

/**
 * Before an API key is looked up, in ONE round trip (every API request pays it): the failed
 * authentications of the client address and of the presented key's prefix are read, and unless
 * they refuse it, the request is counted against the key (named by its hash, `kh:<sha-256>`,
 * known before the lookup). Returns the key's count, for applyRateLimit once the key is
 * authenticated, and whether the key is known to exist.
 *
 * Failures are keyed by what cannot hurt others (issue 28): the address as the trusted proxy
 * reports it (http/client-address.ts) and the presented credential's prefix. Either one at
 * `authFailureMax` refuses, with 429 rate_limit and no lookup, only keys that are NOT known to
 * exist: a key that authenticated once (or was just created) is remembered by its hash
 * (`kv:<hash>`, KNOWN_KEY_TTL_SEC, refreshed by each use), so a valid key is never refused
 * because of failures of others sharing its address, and guessing or a stale client still cannot
 * load the database with lookups. Requests without a key are never refused here: they cost no
 * lookup (a missing or malformed credential is a 401 at once; a session is one Redis read).
 */
export async function admitApiKeyRequest(
  redis: Redis,
  address: string,
  key: PresentedKey,
  authFailureMax: number,
  limit: { max: number; windowSec: number },
  now: Date,
): Promise<{ count: number; known: boolean }> {
  const counter = windowOf(`rl:kh:${key.hash}`, limit.windowSec, now);
  const byAddress = windowOf(`af:${address}`, AUTH_FAILURE_WINDOW_SEC, now);
  const byPrefix = windowOf(`afp:${key.prefix}`, AUTH_FAILURE_WINDOW_SEC, now);
  let res: [number, (number | string | null)?, (string | null)?, number?];
  try {
    res = await withSlidingCount(redis).dteAdmit(
      byAddress.current,
      byAddress.previous,
      byPrefix.current,
      byPrefix.previous,
      `kv:${key.hash}`,
      counter.current,
      counter.previous,
      String(1 - byAddress.elapsed),
      String(authFailureMax),
      limit.windowSec * 2 + 1,
      KNOWN_KEY_TTL_SEC,
    );
  } catch (err) {
    throw redisDown(err);
  }
  if (!Array.isArray(res)) throw redisDown(new Error('rate limit counter failed'));
  if (res[0] === 0) {
    throw tooMany({ max: authFailureMax, windowSec: AUTH_FAILURE_WINDOW_SEC }, now, 'failed authentications');
  }
  return { count: slidingEstimate(counter, res[1], res[2]), known: res[3] === 1 };
}

/** The window of failed authentications per client address and per key prefix (AUTH_FAILURE_MAX in it, 20 by default). */
export const AUTH_FAILURE_WINDOW_SEC = 60;

/**
 * Counts one failed authentication of a presented key against the client address and the key's
 * prefix, and forgets the key as known (a revoked or expired key is refused like an unknown one).
 */
export async function recordKeyFailure(
  redis: Redis,
  address: string,
  key: PresentedKey,
  now: Date,
): Promise<void> {
  await Promise.all([
    slidingCount(redis, `af:${address}`, AUTH_FAILURE_WINDOW_SEC, now),
    slidingCount(redis, `afp:${key.prefix}`, AUTH_FAILURE_WINDOW_SEC, now),
    redis.del(`kv:${key.hash}`),
  ]);
}

/** Remembers a key as existing (it authenticated, or was just created): see admitApiKeyRequest. */
export async function rememberValidKey(redis: Redis, keyHash: string): Promise<void> {
  await redis.set(`kv:${keyHash}`, '1', 'EX', KNOWN_KEY_TTL_SEC);
}

/**
 * A named sliding-window limit (no RateLimit headers: those describe the caller's own limit),
 * e.g. `POST /webhooks/:id/test` per subscription. Over it: 429 rate_limit with retryAfterSec.
 */
export async function enforceNamedLimit(
  redis: Redis,
  name: string,
  limit: { max: number; windowSec: number },
  now: Date,
  what: string,
): Promise<void> {
  const count = await slidingCount(redis, `nl:${name}`, limit.windowSec, now);
  if (count > limit.max) throw tooMany(limit, now, what);
}

/** Whole seconds (at least 1) until the current window of `windowSec` ends. */
function secondsToWindowEnd(windowSec: number, now: Date): number {
  const nowSec = now.getTime() / 1000;
  const window = Math.floor(nowSec / windowSec);
  return Math.max(1, Math.ceil((window + 1) * windowSec - nowSec));
}

function tooMany(limit: { max: number; windowSec: number }, now: Date, what = 'requests'): ApiError {
  const retryAfterSec = secondsToWindowEnd(limit.windowSec, now);
  return new ApiError('rate_limit', `Too many ${what}: at most ${limit.max} every ${limit.windowSec} s.`, {
    detail: { retryAfterSec },
    hint: 'Back off exponentially with jitter.',
  });
}

/**
 * One round trip and one command: the current window's counter incremented, with its expiry, and
 * the previous window's, atomically as the MULTI of before was, without the five commands and
 * replies of a MULTI … EXEC per count. KEYS: current, previous; ARGV: expiry seconds. Answers
 * [current, previous] (nil when the previous counter is absent).
 */
const SLIDING_COUNT_LUA = `
local current = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return {current, redis.call('GET', KEYS[2])}`;

/**
 * admitApiKeyRequest's one command. KEYS: the address's failures (current, previous window), the
 * prefix's failures (current, previous), the known-key marker, the key's counter (current,
 * previous); ARGV: the weight of the previous failures window, the failures that refuse, the key
 * counter's expiry, the known marker's lifetime. Answers {0} when refused (nothing counted), else
 * {1, key current, key previous, known (1/0)}. A known key's marker is refreshed.
 */
const ADMIT_LUA = `
local known = redis.call('EXPIRE', KEYS[5], ARGV[4])
if known == 0 then
  local w = tonumber(ARGV[1])
  local max = tonumber(ARGV[2])
  local byAddress = tonumber(redis.call('GET', KEYS[2]) or '0') * w + tonumber(redis.call('GET', KEYS[1]) or '0')
  local byPrefix = tonumber(redis.call('GET', KEYS[4]) or '0') * w + tonumber(redis.call('GET', KEYS[3]) or '0')
  if byAddress >= max or byPrefix >= max then return {0} end
end
local current = redis.call('INCR', KEYS[6])
redis.call('EXPIRE', KEYS[6], ARGV[3])
return {1, current, redis.call('GET', KEYS[7]), known}`;

type SlidingCountRedis = Redis & {
  /** ADMIT_LUA: its 7 keys, then its 4 arguments */
  dteAdmit(
    ...keysThenArgs: (string | number)[]
  ): Promise<[number, (number | string | null)?, (string | null)?, number?]>;
  dteSlidingCount(
    current: string,
    previous: string,
    expirySec: number,
  ): Promise<[number | string | null, string | null]>;
};

/** The client with the script as a command (EVALSHA, EVAL once when Redis does not hold it yet). */
function withSlidingCount(redis: Redis): SlidingCountRedis {
  const r = redis as SlidingCountRedis;
  if (typeof r.dteSlidingCount !== 'function') {
    redis.defineCommand('dteSlidingCount', { numberOfKeys: 2, lua: SLIDING_COUNT_LUA });
    redis.defineCommand('dteAdmit', { numberOfKeys: 7, lua: ADMIT_LUA });
  }
  return r;
}

/** Counts one more in `prefix`'s window; answers the sliding estimate (slidingEstimate). */
async function slidingCount(redis: Redis, prefix: string, windowSec: number, now: Date): Promise<number> {
  const w = windowOf(prefix, windowSec, now);
  let res: [number | string | null, string | null];
  try {
    res = await withSlidingCount(redis).dteSlidingCount(w.current, w.previous, windowSec * 2 + 1);
  } catch (err) {
    throw redisDown(err);
  }
  if (!Array.isArray(res)) throw redisDown(new Error('rate limit counter failed'));
  return slidingEstimate(w, res[0], res[1]);
}

/** `previous × (time left of the previous window inside the last window) + current`. */
function slidingEstimate(
  w: { elapsed: number },
  current: number | string | null | undefined,
  previous: number | string | null | undefined,
): number {
  return Number(previous ?? 0) * (1 - w.elapsed) + Number(current ?? 0);
}

/** The counters of `prefix` for the window `now` falls in and the one before, and how far into it `now` is (0-1). */
function windowOf(
  prefix: string,
  windowSec: number,
  now: Date,
): { current: string; previous: string; elapsed: number } {
  const nowSec = now.getTime() / 1000;
  const window = Math.floor(nowSec / windowSec);
  return {
    current: `${prefix}:${window}`,
    previous: `${prefix}:${window - 1}`,
    elapsed: (nowSec - window * windowSec) / windowSec,
  };
}

/** Redis is down or refused the command: the catalog's transient 503 (the spec has no Redis code). */
export function redisDown(cause: unknown): ApiError {
  return new ApiError('db.unavailable', 'A dependency is unavailable (rate limiting); retry with backoff.', {
    detail: { dependency: 'redis' },
    cause,
  });
}
