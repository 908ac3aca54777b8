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
  const count = await slidingCount(redis, `rl:${actorId}`, limit.windowSec, now, true);
  ctx.set('RateLimit-Limit', String(limit.max));
  ctx.set('RateLimit-Remaining', String(Math.max(0, Math.floor(limit.max - count))));
  if (count > limit.max) throw tooMany(limit, now);
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
  const count = await slidingCount(redis, `af:${address}`, AUTH_FAILURE_WINDOW_SEC, now, false);
  if (count >= max) {
    throw tooMany({ max, windowSec: AUTH_FAILURE_WINDOW_SEC }, now, 'failed authentications');
  }
}

/** Counts one failed authentication of that client address. */
export async function recordAuthFailure(redis: Redis, address: string, now: Date): Promise<void> {
  await slidingCount(redis, `af:${address}`, AUTH_FAILURE_WINDOW_SEC, now, true);
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
  const count = await slidingCount(redis, `nl:${name}`, limit.windowSec, now, true);
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
 * One round trip and one command: the current window's counter (incremented, with its expiry,
 * or only read) and the previous window's, atomically as the MULTI of before was, without the
 * five commands and replies of a MULTI … EXEC per count. KEYS: current, previous; ARGV:
 * increment (1/0), expiry seconds. Answers [current, previous] (nil when a counter is absent).
 */
const SLIDING_COUNT_LUA = `
local current
if ARGV[1] == '1' then
  current = redis.call('INCR', KEYS[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
else
  current = redis.call('GET', KEYS[1])
end
return {current, redis.call('GET', KEYS[2])}`;

type SlidingCountRedis = Redis & {
  dteSlidingCount(
    current: string,
    previous: string,
    increment: '1' | '0',
    expirySec: number,
  ): Promise<[number | string | null, string | null]>;
};

/** The client with the script as a command (EVALSHA, EVAL once when Redis does not hold it yet). */
function withSlidingCount(redis: Redis): SlidingCountRedis {
  const r = redis as SlidingCountRedis;
  if (typeof r.dteSlidingCount !== 'function') {
    redis.defineCommand('dteSlidingCount', { numberOfKeys: 2, lua: SLIDING_COUNT_LUA });
  }
  return r;
}

async function slidingCount(
  redis: Redis,
  prefix: string,
  windowSec: number,
  now: Date,
  increment: boolean,
): Promise<number> {
  const nowSec = now.getTime() / 1000;
  const window = Math.floor(nowSec / windowSec);
  let res: [number | string | null, string | null];
  try {
    res = await withSlidingCount(redis).dteSlidingCount(
      `${prefix}:${window}`,
      `${prefix}:${window - 1}`,
      increment ? '1' : '0',
      windowSec * 2 + 1,
    );
  } catch (err) {
    throw redisDown(err);
  }
  if (!Array.isArray(res)) throw redisDown(new Error('rate limit counter failed'));
  const current = Number(res[0] ?? 0);
  const previous = Number(res[1] ?? 0);
  const elapsed = (nowSec - window * windowSec) / windowSec;
  return previous * (1 - elapsed) + current;
}

/** Redis is down or refused the command: the catalog's transient 503 (the spec has no Redis code). */
export function redisDown(cause: unknown): ApiError {
  return new ApiError('db.unavailable', 'A dependency is unavailable (rate limiting); retry with backoff.', {
    detail: { dependency: 'redis' },
    cause,
  });
}
