import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** How long the index of a grant's artifacts is kept (longer than any refresh token). */
const GRANT_INDEX_TTL_SEC = 60 * 24 * 3600;

/**
 * oidc-provider storage on Redis, so several api replicas share clients, grants, codes, tokens
 * and interactions. One key per artifact (`oidc:<Model>:<id>`, expiring with it), plus per grant
 * a list of the keys it issued so that revoking a grant (revocation, reuse of a rotated refresh
 * token) deletes every token of the family.
 */
export function redisAdapterFactory(redis: Redis): new (name: string) => Adapter {
  return class RedisAdapter implements Adapter {
    constructor(private readonly name: string) {}

    private key(id: string): string {
      return `oidc:${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.key(id);
      const multi = redis.multi();
      if (expiresIn) multi.set(key, JSON.stringify(payload), 'EX', expiresIn);
      else multi.set(key, JSON.stringify(payload));
      if (payload.grantId) {
        const grantKey = `oidc:grant:${payload.grantId}`;
        multi.rpush(grantKey, key);
        multi.expire(grantKey, GRANT_INDEX_TTL_SEC);
      }
      if (payload.uid) {
        if (expiresIn) multi.set(`oidc:uid:${payload.uid}`, id, 'EX', expiresIn);
        else multi.set(`oidc:uid:${payload.uid}`, id);
      }
      await multi.exec();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const raw = await redis.get(this.key(id));
      return raw ? (JSON.parse(raw) as AdapterPayload) : undefined;
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
      const raw = await redis.get(key);
      if (!raw) return;
      const payload = JSON.parse(raw) as AdapterPayload;
      payload.consumed = Math.floor(Date.now() / 1000);
      await redis.set(key, JSON.stringify(payload), 'KEEPTTL');
    }

    async destroy(id: string): Promise<void> {
      await redis.del(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const grantKey = `oidc:grant:${grantId}`;
      const keys = await redis.lrange(grantKey, 0, -1);
      await redis.del(...keys, grantKey, `oidc:Grant:${grantId}`);
    }
  };
}
