import { parse, readConfig } from '@dte/service-runtime';
import {
  siiClientEnvSpec,
  siiWorkerEnvSpec,
  type SiiClientConfig,
  type SiiWorkerConfig,
} from '@dte/sii-client';

export interface SyncSettings {
  /** a synced open period (this month, the previous one) is read again after this long (ms) */
  resyncMs: number;
  /** period of the scheduler loop: retries due and open periods to re-sync (ms) */
  tickMs: number;
  /** first wait after a failed sync (ms); doubles per attempt, capped at one hour */
  backoffMs: number;
  /** failed attempts before a period is left `failed` (POST /rcv re-arms it) */
  maxAttempts: number;
}

export interface Config extends SiiClientConfig, SiiWorkerConfig, SyncSettings {
  healthPort: number;
}

/**
 * Every environment variable this service reads, checked at start-up (Kafka through
 * @dte/messaging; the SII's through siiClientEnvSpec; database, Redis and master key through
 * siiWorkerEnvSpec).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>(
    {
      ...siiClientEnvSpec,
      ...siiWorkerEnvSpec,
      healthPort: { env: 'RCV_SYNC_HEALTH_PORT', default: 3105, parse: parse.port },
      resyncMs: { env: 'RCV_RESYNC_MS', default: 3_600_000, parse: parse.positiveInt },
      tickMs: { env: 'RCV_TICK_MS', default: 30_000, parse: parse.positiveInt },
      backoffMs: { env: 'RCV_BACKOFF_MS', default: 5_000, parse: parse.positiveInt },
      maxAttempts: { env: 'RCV_MAX_ATTEMPTS', default: 8, parse: parse.positiveInt },
    },
    env,
  );
}
