import { parse, readConfig } from '@dte/service-runtime';
import {
  siiClientEnvSpec,
  siiWorkerEnvSpec,
  type SiiClientConfig,
  type SiiWorkerConfig,
} from '@dte/sii-client';

/** POLL_PACE: how the poll schedule follows the SII (pace.ts) */
export type PaceMode = 'adaptive' | 'fixed';

/** The pace's settings (optional in PollerSettings; these defaults otherwise, and in the environment's). */
export const PACE_DEFAULTS = {
  pace: 'adaptive' as PaceMode,
  paceAgeFactor: 0.5,
  paceMinMs: 500,
  paceShrink: 0.03,
};

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
  /** POLL_PACE: 'adaptive' (default) aims polls at the SII's recent verdict time (pace.ts); 'fixed' */
  pace?: PaceMode;
  /** POLL_PACE_AGE_FACTOR: past the expected time, the next poll after envelope age × this (0.5) */
  paceAgeFactor?: number;
  /** POLL_PACE_MIN_MS: shortest wait between two polls of one envelope (500) */
  paceMinMs?: number;
  /** POLL_PACE_SHRINK: how much a verdict found by the first poll lowers the expected time (0.03) */
  paceShrink?: number;
}

export interface Config extends SiiClientConfig, SiiWorkerConfig, PollerSettings {
  healthPort: number;
}

const fraction = (raw: string): number => {
  const n = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || !(n > 0 && n < 1))
    throw new Error(`expected a number between 0 and 1, got "${raw}"`);
  return n;
};

const paceMode = (raw: string): PaceMode => {
  if (raw !== 'adaptive' && raw !== 'fixed') throw new Error(`expected adaptive or fixed, got "${raw}"`);
  return raw;
};

const factor = (raw: string): number => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new Error(`expected a number >= 1, got "${raw}"`);
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
      healthPort: { env: 'SII_POLLER_HEALTH_PORT', default: 3103, parse: parse.port },
      ...siiWorkerEnvSpec,
      firstDelayMs: { env: 'POLL_FIRST_DELAY_MS', default: 3000, parse: parse.nonNegativeInt },
      backoffBaseMs: { env: 'POLL_BACKOFF_BASE_MS', default: 5000, parse: parse.nonNegativeInt },
      backoffFactor: { env: 'POLL_BACKOFF_FACTOR', default: 2, parse: factor },
      backoffMaxMs: { env: 'POLL_BACKOFF_MAX_MS', default: 600000, parse: parse.nonNegativeInt },
      maxAttempts: { env: 'POLL_MAX_ATTEMPTS', default: 40, parse: parse.positiveInt },
      tickMs: { env: 'POLL_TICK_MS', default: 1000, parse: parse.positiveInt },
      leaseMs: { env: 'POLL_LEASE_MS', default: 120000, parse: parse.positiveInt },
      concurrency: { env: 'POLL_CONCURRENCY', default: 8, parse: parse.positiveInt },
      pace: { env: 'POLL_PACE', default: PACE_DEFAULTS.pace, parse: paceMode },
      paceAgeFactor: { env: 'POLL_PACE_AGE_FACTOR', default: PACE_DEFAULTS.paceAgeFactor, parse: fraction },
      paceMinMs: { env: 'POLL_PACE_MIN_MS', default: PACE_DEFAULTS.paceMinMs, parse: parse.positiveInt },
      paceShrink: { env: 'POLL_PACE_SHRINK', default: PACE_DEFAULTS.paceShrink, parse: fraction },
    },
    env,
  );
}

/** Wait after the n-th poll without a verdict (n >= 1). */
export function backoffDelay(s: PollerSettings, n: number): number {
  return Math.min(s.backoffBaseMs * s.backoffFactor ** Math.max(0, n - 1), s.backoffMaxMs);
}
