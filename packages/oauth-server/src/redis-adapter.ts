import type { Redis } from 'ioredis';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

/** How long the index of a grant's artifacts is kept (longer than any refresh token). */
const GRANT_INDEX_TTL_SEC = 60 * 24 * 3600;

export interface RedisAdapterOptions {
  /** a registered client nobody has used (no grant yet) is forgotten after this many seconds */
  unusedClientTtlSec: number;
  /** a client with a grant lives as long as its newest grant can (the refresh tokens' lifetime) */
  usedClientTtlSec: number;
}

/**
 * Marks a token consumed only if no one did before: one SET NX on a marker key living as long as
 * the token. 1 = this caller consumed it, -1 = someone else did, 0 = the token is gone.
 */
const CONSUME_ONCE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
local ok
if ttl > 0 then ok = redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ttl)
else ok = redis.call('SET', KEYS[2], ARGV[1], 'NX') end
if ok then return 1 end
return -1`;

/**
 * oidc-provider storage on Redis, so several api replicas share clients, grants, codes, tokens
 * and interactions. One key per artifact (`oidc:<Model>:<id>`, expiring with it), plus per grant
 * a list of the keys it issued so that revoking a grant (revocation, reuse of a rotated refresh
 * token) deletes every token of the family.
 *
 * Bounds: every key expires. A dynamically registered client expires after `unusedClientTtlSec`
 * unless a grant is issued to it; each grant extends it to `usedClientTtlSec`.
 * Consumption (authorization codes, rotated refresh tokens) is atomic: of two concurrent
 * redemptions of one code or refresh token exactly one gets tokens, the other `invalid_grant`.
 */
export function redisAdapterFactory(redis: Redis, opts: RedisAdapterOptions): new (name: string) => Adapter {
  return class RedisAdapter implements Adapter {
    constructor(private readonly name: string) {}

    private key(id: string): string {
      return `oidc:${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      const ttl = expiresIn || (this.name === 'Client' ? opts.unusedClientTtlSec : 0);
      const multi = redis.multi();
      if (ttl) multi.set(key, JSON.stringify(payload), 'EX', ttl);
      else multi.set(key, JSON.stringify(payload));
      if (payload.grantId) {
        const grantKey = `oidc:grant:${payload.grantId}`;
        multi.rpush(grantKey, key);
        multi.expire(grantKey, GRANT_INDEX_TTL_SEC);
      }
      if (this.name === 'Grant' && payload.clientId) {
        // the client is in use: it lives as long as its newest grant may (plain EXPIRE, no
        // Redis 7 options: a later grant never ends sooner than an earlier one)
        multi.expire(
          `oidc:Client:${payload.clientId}`,
          Math.max(opts.usedClientTtlSec, opts.unusedClientTtlSec),
        );
      }
      if (payload.uid) {
        if (ttl) multi.set(`oidc:uid:${payload.uid}`, id, 'EX', ttl);
        else multi.set(`oidc:uid:${payload.uid}`, id);
      }
      await multi.exec();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const [raw, consumed] = await redis.mget(this.key(id), `${this.key(id)}:consumed`);
      if (!raw) return undefined;
      const payload = JSON.parse(raw) as AdapterPayload;
      if (consumed) payload.consumed = Number(consumed);
      return payload;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const id = await redis.get(`oidc:uid:${uid}`);
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(): Promise<AdapterPayload | undefined> {
      return undefined; // device flow is not enabled
    }

    async consume(id: string): Promise<void> {
      const key = this.key(id);
      const won = (await redis.eval(
        CONSUME_ONCE,
        2,
        key,
        `${key}:consumed`,
        String(Math.floor(Date.now() / 1000)),
      )) as number;
      // the loser of a race: the provider already checked `consumed` on its (stale) read
      if (won === -1) throw new errors.InvalidGrant(`${this.name} already consumed`);
    }

    async destroy(id: string): Promise<void> {
      await redis.del(this.key(id), `${this.key(id)}:consumed`);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const grantKey = `oidc:grant:${grantId}`;
      const keys = await redis.lrange(grantKey, 0, -1);
      await redis.del(...keys, grantKey, `oidc:Grant:${grantId}`);
    }
  };
}
