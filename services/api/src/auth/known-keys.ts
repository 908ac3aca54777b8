import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { KNOWN_KEY_TTL_SEC } from './rate-limit';

/**
 * Keeps Redis' markers of existing API keys (`kv:<hash>`, rate-limit.ts admitApiKeyRequest) in
 * step with api_keys, so a valid key is never refused because of failed authentications of others
 * at its address, even before its first use: at start every active key is marked, then every
 * KNOWN_KEYS_REFRESH_MS (60 s) the keys created since (the dashboard's key routes mark theirs at once;
 * the seed and the operator CLI run in other processes). 1 000 keys per Redis pipeline.
 */
export function startKnownKeysRefresh(
  db: DataSource,
  redis: Redis,
  logger: Logger,
  intervalMs: number,
): { stop(): void } {
  let since: Date | null = null;
  let running = false;
  const pass = async () => {
    if (running) return;
    running = true;
    try {
      const started = new Date(Date.now() - 5_000); // overlap: a key committed during the pass
      const rows: { key_hash: string }[] = await db.query(
        `SELECT key_hash FROM api_keys
          WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
            AND ($1::timestamptz IS NULL OR created_at >= $1)`,
        [since],
      );
      for (let i = 0; i < rows.length; i += 1000) {
        const p = redis.pipeline();
        for (const r of rows.slice(i, i + 1000)) p.set(`kv:${r.key_hash}`, '1', 'EX', KNOWN_KEY_TTL_SEC);
        await p.exec();
      }
      since = started;
    } catch (err) {
      logger.warn({ err }, 'known API keys: refresh failed; retried at the next pass');
    } finally {
      running = false;
    }
  };
  void pass();
  const timer = setInterval(() => void pass(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
