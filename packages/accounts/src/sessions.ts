import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Server-side dashboard sessions in Redis. The cookie holds only a random 256-bit id; Redis keeps
 * `sess:<sha256(id)>` → JSON {uid, org, createdAt, lastSeenAt} (the id itself is never stored, so
 * a Redis dump does not hand out live cookies). A session ends at the first of: logout, idle
 * timeout (no request for `idleSec`), absolute lifetime (`absoluteSec` since login). Times are
 * checked against the caller's clock, and Redis expires the key at the latest possible end.
 */
export interface SessionData {
  uid: string;
  /** the organization chosen for this session, or null before choosing/creating one */
  org: string | null;
  createdAt: number;
  lastSeenAt: number;
}

export interface SessionLimits {
  idleSec: number;
  absoluteSec: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleSec: 30 * 60, absoluteSec: 12 * 3600 };

const keyOf = (id: string) => `sess:${createHash('sha256').update(id).digest('hex')}`;
const userSetOf = (uid: string) => `sess-user:${uid}`;

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
  ) {}

  /** A new session (a new id: login always rotates the id). */
  async create(uid: string, org: string | null, now: Date): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const t = now.getTime();
    const data: SessionData = { uid, org, createdAt: t, lastSeenAt: t };
    await this.redis
      .multi()
      .set(keyOf(id), JSON.stringify(data), 'EX', this.limits.absoluteSec)
      .sadd(userSetOf(uid), keyOf(id))
      .expire(userSetOf(uid), this.limits.absoluteSec)
      .exec();
    return id;
  }

  /** The live session of an id, touching its idle timer; null when absent or expired. */
  async get(id: string, now: Date): Promise<SessionData | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
    const raw = await this.redis.get(keyOf(id));
    if (!raw) return null;
    const data = JSON.parse(raw) as SessionData;
    const t = now.getTime();
    if (
      t - data.createdAt >= this.limits.absoluteSec * 1000 ||
      t - data.lastSeenAt >= this.limits.idleSec * 1000
    ) {
      await this.redis.del(keyOf(id));
      return null;
    }
    if (t - data.lastSeenAt > 5000) {
      data.lastSeenAt = t;
      const left = Math.ceil((data.createdAt + this.limits.absoluteSec * 1000 - t) / 1000);
      await this.redis.set(keyOf(id), JSON.stringify(data), 'EX', Math.max(1, left));
    }
    return data;
  }

  /** Sets the organization of a live session (after checking membership elsewhere). */
  async setOrganization(id: string, org: string | null): Promise<void> {
    const raw = await this.redis.get(keyOf(id));
    if (!raw) return;
    const data = JSON.parse(raw) as SessionData;
    data.org = org;
    await this.redis.set(keyOf(id), JSON.stringify(data), 'KEEPTTL');
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(keyOf(id));
  }

  /** Ends every session of a user (password change, removal). */
  async destroyAllOf(uid: string): Promise<void> {
    const keys = await this.redis.smembers(userSetOf(uid));
    if (keys.length) await this.redis.del(...keys);
    await this.redis.del(userSetOf(uid));
  }
}
