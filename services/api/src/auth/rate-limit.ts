import type { Context } from 'koa';
import type { Redis } from 'ioredis';
import { ApiError } from '../http/api-error';

/**
 * Fixed-window rate limit in Redis, one counter per actor (API key or session user) per window:
 * `rl:<actor>:<window index>`, INCR then EXPIRE in one MULTI, so every api replica shares it.
 * Over the limit: 429 rate_limit with detail.retryAfterSec (seconds to the window's end) and
 * Retry-After. RateLimit-Limit / RateLimit-Remaining tell the client where it stands.
 */
export async function enforceRateLimit(
  ctx: Context,
  redis: Redis,
  actorId: string,
  limit: { max: number; windowSec: number },
  now: Date,
): Promise<void> {
  const nowSec = now.getTime() / 1000;
  const window = Math.floor(nowSec / limit.windowSec);
  const key = `rl:${actorId}:${window}`;
  const res = await redis
    .multi()
    .incr(key)
    .expire(key, limit.windowSec + 1)
    .exec();
  if (!res || res[0][0]) throw res?.[0][0] ?? new Error('rate limit counter failed');
  const count = res[0][1] as number;
  ctx.set('RateLimit-Limit', String(limit.max));
  ctx.set('RateLimit-Remaining', String(Math.max(0, limit.max - count)));
  if (count > limit.max) {
    const retryAfterSec = Math.max(1, Math.ceil((window + 1) * limit.windowSec - nowSec));
    throw new ApiError('rate_limit', `Too many requests: at most ${limit.max} every ${limit.windowSec} s.`, {
      detail: { retryAfterSec },
      hint: 'Back off exponentially with jitter.',
    });
  }
}
