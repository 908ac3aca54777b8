import type { Context } from 'koa';
import type { Redis } from 'ioredis';
import { ApiError } from '../http/api-error';

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
  if (count > limit.max) throw tooMany(limit, now);
}

/**
 * refuseAddressAfterFailures and enforceRateLimit's count for a request that presents an API key,
 * in ONE round trip before the key is looked up (every API request pays it): the client address's
 * failures are read and, unless they refuse it (429 rate_limit, the key is not counted, as
 * before), the request is counted against the key. The key is named by its hash (`kh:<sha-256>`,
 * one key as its id is), known before the lookup. Returns the key's count, for applyRateLimit once
 * the key is authenticated.
 */
export async function admitApiKeyRequest(
  redis: Redis,
  address: string,
  keyHash: string,
  authFailureMax: number,
  limit: { max: number; windowSec: number },
  now: Date,
): Promise<number> {
  const key = windowOf(`rl:kh:${keyHash}`, limit.windowSec, now);
  const res = await admit(redis, address, authFailureMax, now, {
    ...key,
    expirySec: limit.windowSec * 2 + 1,
  });
  return slidingEstimate(key, res[1], res[2]);
}

/**
 * THE address check (refuseAddressAfterFailures, admitApiKeyRequest) in one command: 429
 * rate_limit when the address's failed authentications in the window reach `authFailureMax`;
 * otherwise, with `key`, the request counted against it, whose counters come back.
 */
async function admit(
  redis: Redis,
  address: string,
  authFailureMax: number,
  now: Date,
  key?: { current: string; previous: string; expirySec: number },
): Promise<[number, (number | string | null)?, (string | null)?]> {
  const failures = windowOf(`af:${address}`, AUTH_FAILURE_WINDOW_SEC, now);
  let res: [number, (number | string | null)?, (string | null)?];
  try {
    res = await withSlidingCount(redis).dteAdmit(
      key ? 4 : 2,
      failures.current,
      failures.previous,
      ...(key ? [key.current, key.previous] : []),
      String(1 - failures.elapsed),
      String(authFailureMax),
      key?.expirySec ?? 0,
    );
  } catch (err) {
    throw redisDown(err);
  }
  if (!Array.isArray(res)) throw redisDown(new Error('rate limit counter failed'));
  if (res[0] === 0) {
    throw tooMany({ max: authFailureMax, windowSec: AUTH_FAILURE_WINDOW_SEC }, now, 'failed authentications');
  }
  return res;
}

/** The window of failed authentications per client address (the count is AUTH_FAILURE_MAX, 20 by default). */
export const AUTH_FAILURE_WINDOW_SEC = 60;

/**
 * Before any API key is looked up: a client address with `max` (AUTH_FAILURE_MAX) failed
 * authentications in the last AUTH_FAILURE_WINDOW_SEC seconds answers 429 rate_limit without
 * touching the database (guessing keys, or a broken client, cannot load it for everyone).
 */
export async function refuseAddressAfterFailures(
  redis: Redis,
  address: string,
  max: number,
  now: Date,
): Promise<void> {
  await admit(redis, address, max, now);
}

/** Counts one failed authentication of that client address. */
export async function recordAuthFailure(redis: Redis, address: string, now: Date): Promise<void> {
  await slidingCount(redis, `af:${address}`, AUTH_FAILURE_WINDOW_SEC, now);
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

function tooMany(limit: { max: number; windowSec: number }, now: Date, what = 'requests'): ApiError {
  const nowSec = now.getTime() / 1000;
  const window = Math.floor(nowSec / limit.windowSec);
  const retryAfterSec = Math.max(1, Math.ceil((window + 1) * limit.windowSec - nowSec));
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
 * admit's one command. KEYS: the address's failures (current, previous window) and, when counting
 * a key, its counter (current, previous); ARGV: the weight of the previous failures window, the
 * failures that refuse, the key counter's expiry. Answers {0} when the address is refused
 * (nothing counted), {1} when admitted without a key, else {1, key current, key previous}.
 */
const ADMIT_LUA = `
local failures = tonumber(redis.call('GET', KEYS[2]) or '0') * tonumber(ARGV[1])
  + tonumber(redis.call('GET', KEYS[1]) or '0')
if failures >= tonumber(ARGV[2]) then return {0} end
if #KEYS < 4 then return {1} end
local current = redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return {1, current, redis.call('GET', KEYS[4])}`;

type SlidingCountRedis = Redis & {
  /** ADMIT_LUA, the number of keys (2 or 4) first */
  dteAdmit(
    numberOfKeys: 2 | 4,
    ...keysThenArgs: (string | number)[]
  ): Promise<[number, (number | string | null)?, (string | null)?]>;
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
    // no numberOfKeys: each call says how many keys it passes
    redis.defineCommand('dteAdmit', { lua: ADMIT_LUA });
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
