import { parse, readConfig } from '@dte/service-runtime';
import { siiClientEnvSpec, type SiiClientConfig } from '@dte/sii-client';

export interface PollerSettings {
  /** wait before the first QueryEstUp of a new upload (ms) */
  firstDelayMs: number;
  /** wait after the 1st poll (ms); multiplied by backoffFactor after each poll, up to backoffMaxMs */
  backoffBaseMs: number;
  backoffFactor: number;
  backoffMaxMs: number;
  /** polls without a verdict before the documents are `stuck` */
  maxAttempts: number;
  /** period of the schedule loop (ms) */
  tickMs: number;
  /** a claimed poll is due again after this long if its instance died mid-poll (ms) */
  leaseMs: number;
  /** polls run at once by one instance */
  concurrency: number;
}

export interface Config extends SiiClientConfig, PollerSettings {
  healthPort: number;
  databaseUrl: string;
  databaseSchema?: string;
  redisUrl: string;
  masterKey: string;
  masterKeyId: string;
  tokenCachePrefix: string;
}

const positive = (raw: string): number => {
  const n = parse.int(raw);
  if (n <= 0) throw new Error(`expected a positive integer, got ${n}`);
  return n;
};
const nonNegative = (raw: string): number => {
  const n = parse.int(raw);
  if (n < 0) throw new Error(`expected an integer >= 0, got ${n}`);
  return n;
};
const factor = (raw: string): number => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new Error(`expected a number >= 1, got "${raw}"`);
  return n;
};

/**
 * Every environment variable this service reads, checked at start-up (Kafka through
 * @dte/messaging; the SII's through siiClientEnvSpec).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>(
    {
      ...siiClientEnvSpec,
      healthPort: { env: 'SII_POLLER_HEALTH_PORT', default: 3103, parse: parse.port },
      databaseUrl: { env: 'DATABASE_URL', default: 'postgres://dte:dte@127.0.0.1:15432/dte' },
      databaseSchema: { env: 'DATABASE_SCHEMA', required: false },
      redisUrl: { env: 'REDIS_URL', default: 'redis://127.0.0.1:16379' },
      masterKey: { env: 'MASTER_KEY' },
      masterKeyId: { env: 'MASTER_KEY_ID', default: 'mk1' },
      tokenCachePrefix: { env: 'SII_TOKEN_CACHE_PREFIX', default: 'sii:token' },
      firstDelayMs: { env: 'POLL_FIRST_DELAY_MS', default: 3000, parse: nonNegative },
      backoffBaseMs: { env: 'POLL_BACKOFF_BASE_MS', default: 5000, parse: nonNegative },
      backoffFactor: { env: 'POLL_BACKOFF_FACTOR', default: 2, parse: factor },
      backoffMaxMs: { env: 'POLL_BACKOFF_MAX_MS', default: 600000, parse: nonNegative },
      maxAttempts: { env: 'POLL_MAX_ATTEMPTS', default: 40, parse: positive },
      tickMs: { env: 'POLL_TICK_MS', default: 1000, parse: positive },
      leaseMs: { env: 'POLL_LEASE_MS', default: 120000, parse: positive },
      concurrency: { env: 'POLL_CONCURRENCY', default: 8, parse: positive },
    },
    env,
  );
}

/** Wait after the n-th poll without a verdict (n >= 1). */
export function backoffDelay(s: PollerSettings, n: number): number {
  return Math.min(s.backoffBaseMs * s.backoffFactor ** Math.max(0, n - 1), s.backoffMaxMs);
}
