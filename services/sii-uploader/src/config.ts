import { parse, readConfig } from '@dte/service-runtime';
import { siiClientEnvSpec, type SiiClientConfig } from '@dte/sii-client';

export interface UploaderSettings {
  /** most documents in one EnvioDTE (the SII takes 2000) */
  maxDocs: number;
  /** longest a signed document waits for companions before its envelope leaves (ms) */
  maxWaitMs: number;
  /** DTEUpload attempts for transient failures before emision_fallida */
  maxAttempts: number;
  /** delay before the 2nd attempt (ms); doubled each time, up to retryMaxDelayMs */
  retryDelayMs: number;
  retryMaxDelayMs: number;
  /** how long an instance owns an upload it works on; past it another instance recovers it (ms) */
  leaseMs: number;
  /** fallback period of the work loop when no dte.signed arrives (ms) */
  sweepMs: number;
  /** uploads sent at once by one instance */
  concurrency: number;
}

export interface Config extends SiiClientConfig, UploaderSettings {
  healthPort: number;
  databaseUrl: string;
  databaseSchema?: string;
  redisUrl: string;
  masterKey: string;
  masterKeyId: string;
  /** prefix of the SII token keys in Redis */
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
const maxDocs = (raw: string): number => {
  const n = positive(raw);
  if (n > 2000) throw new Error(`an EnvioDTE holds at most 2000 documents, got ${n}`);
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
      healthPort: { env: 'SII_UPLOADER_HEALTH_PORT', default: 3102, parse: parse.port },
      databaseUrl: { env: 'DATABASE_URL', default: 'postgres://dte:dte@127.0.0.1:15432/dte' },
      databaseSchema: { env: 'DATABASE_SCHEMA', required: false },
      redisUrl: { env: 'REDIS_URL', default: 'redis://127.0.0.1:16379' },
      masterKey: { env: 'MASTER_KEY' },
      masterKeyId: { env: 'MASTER_KEY_ID', default: 'mk1' },
      tokenCachePrefix: { env: 'SII_TOKEN_CACHE_PREFIX', default: 'sii:token' },
      maxDocs: { env: 'UPLOAD_MAX_DOCS', default: 100, parse: maxDocs },
      maxWaitMs: { env: 'UPLOAD_MAX_WAIT_MS', default: 2000, parse: nonNegative },
      maxAttempts: { env: 'UPLOAD_MAX_ATTEMPTS', default: 5, parse: positive },
      retryDelayMs: { env: 'UPLOAD_RETRY_DELAY_MS', default: 5000, parse: nonNegative },
      retryMaxDelayMs: { env: 'UPLOAD_RETRY_MAX_DELAY_MS', default: 300000, parse: nonNegative },
      leaseMs: { env: 'UPLOAD_LEASE_MS', default: 180000, parse: positive },
      sweepMs: { env: 'UPLOAD_SWEEP_MS', default: 1000, parse: positive },
      concurrency: { env: 'UPLOAD_CONCURRENCY', default: 4, parse: positive },
    },
    env,
  );
}
