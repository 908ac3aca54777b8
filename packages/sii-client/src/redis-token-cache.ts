/**
 * A TokenCache in Redis, shared by every process that calls the SII (uploaders, pollers): one
 * login per certificate and environment for the whole fleet while the token lives. `delete`
 * with a token is an atomic compare-and-delete (a Lua script), so a process dropping a token the
 * SII refused never throws away the fresh token another process has just stored.
 */
import type { Redis } from 'ioredis';

import type { TokenCache } from './auth';

const COMPARE_AND_DELETE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export class RedisTokenCache implements TokenCache {
  constructor(private readonly redis: Redis) {}

  async get(key: string): Promise<string | undefined> {
    const v = await this.redis.get(key);
    return v ?? undefined;
  }

  async set(key: string, token: string, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) throw new RangeError(`token TTL must be positive, got ${ttlSeconds}`);
    await this.redis.set(key, token, 'PX', Math.round(ttlSeconds * 1000));
  }

  async delete(key: string, token?: string): Promise<void> {
    if (token === undefined) {
      await this.redis.del(key);
      return;
    }
    await this.redis.eval(COMPARE_AND_DELETE, 1, key, token);
  }
}
