import { parse, readConfig } from '@dte/service-runtime';
import {
  siiClientEnvSpec,
  siiWorkerEnvSpec,
  type SiiClientConfig,
  type SiiWorkerConfig,
} from '@dte/sii-client';

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

export interface Config extends SiiClientConfig, SiiWorkerConfig, UploaderSettings {
  healthPort: number;
}

const maxDocs = (raw: string): number => {
  const n = parse.positiveInt(raw);
  if (n > 2000) throw new Error(`an EnvioDTE holds at most 2000 documents, got ${n}`);
  return n;
};

/**
 * Every environment variable this service reads, checked at start-up (Kafka through
 * @dte/messaging; the SII's through siiClientEnvSpec; database, Redis and master key through
 * siiWorkerEnvSpec).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>(
    {
      ...siiClientEnvSpec,
      healthPort: { env: 'SII_UPLOADER_HEALTH_PORT', default: 3102, parse: parse.port },
      ...siiWorkerEnvSpec,
      maxDocs: { env: 'UPLOAD_MAX_DOCS', default: 100, parse: maxDocs },
      maxWaitMs: { env: 'UPLOAD_MAX_WAIT_MS', default: 2000, parse: parse.nonNegativeInt },
      maxAttempts: { env: 'UPLOAD_MAX_ATTEMPTS', default: 5, parse: parse.positiveInt },
      retryDelayMs: { env: 'UPLOAD_RETRY_DELAY_MS', default: 5000, parse: parse.nonNegativeInt },
      retryMaxDelayMs: { env: 'UPLOAD_RETRY_MAX_DELAY_MS', default: 300000, parse: parse.nonNegativeInt },
      leaseMs: { env: 'UPLOAD_LEASE_MS', default: 180000, parse: parse.positiveInt },
      sweepMs: { env: 'UPLOAD_SWEEP_MS', default: 1000, parse: parse.positiveInt },
      concurrency: { env: 'UPLOAD_CONCURRENCY', default: 4, parse: parse.positiveInt },
    },
    env,
  );
}
