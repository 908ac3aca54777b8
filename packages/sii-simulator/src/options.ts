/** Options of one simulator instance (from the environment in main.ts, or given by a test). */
import type { SiiKey } from './engine';
import type { ExchangeRate } from './state';
import type { Trigger } from './triggers';
import type { SiiEnv } from './types';

export interface Timings {
  /** how long QueryEstUp answers -11 ("not yet registered") after an upload */
  registerMs: number;
  /** how long each intermediate state (REC, SOK, FOK, CRT, PDR, PRD) lasts */
  stepMs: number;
}

export interface SimulatorOptions {
  /** 0 = a free port (tests) */
  port: number;
  host: string;
  timings: Timings;
  /** intermediate states shown before an EPR, in order (rejections stop at their stage) */
  intermediateStates: string[];
  /** a seed lives this long (the SII: 2 minutes) */
  seedTtlMs: number;
  /** a token lives this long (the SII does not document it) */
  tokenTtlMs: number;
  /** any authenticated RUT may act for any company; companies are created on first use */
  autoEnrol: boolean;
  /** documents issued more than this many days before reception get a reparo */
  reparoDays: number;
  /** larger files get STATUS 2 */
  maxUploadBytes: number;
  /** most folios one CAF request may ask for */
  maxFoliosPerCaf: number;
  /** RSA size of the stamping keys of granted CAFs (the SII uses 512) */
  cafKeyBits: number;
  /** SII keys (IDK 100 cert, 300 prod); created at start when absent */
  siiKeys: Partial<Record<SiiEnv, SiiKey>>;
  /** triggers armed at start */
  triggers: Trigger[];
  /** exchange rates set at start (as PUT /admin/exchange-rates would), e.g. the local stack's seed */
  exchangeRates: ExchangeRate[];
  /** where the state is kept across restarts (snapshot.ts); in memory only when absent */
  stateFile?: string;
  /** epoch ms; Date.now by default */
  clock: () => number;
}

export const DEFAULT_INTERMEDIATES = ['REC', 'SOK', 'FOK', 'CRT', 'PDR', 'PRD'];

export function withDefaults(partial: Partial<SimulatorOptions> = {}): SimulatorOptions {
  return {
    port: partial.port ?? 18080,
    host: partial.host ?? '127.0.0.1',
    timings: { registerMs: 2000, stepMs: 1000, ...partial.timings },
    intermediateStates: partial.intermediateStates ?? DEFAULT_INTERMEDIATES,
    seedTtlMs: partial.seedTtlMs ?? 120_000,
    tokenTtlMs: partial.tokenTtlMs ?? 3_600_000,
    autoEnrol: partial.autoEnrol ?? false,
    reparoDays: partial.reparoDays ?? 60,
    maxUploadBytes: partial.maxUploadBytes ?? 10 * 1024 * 1024,
    maxFoliosPerCaf: partial.maxFoliosPerCaf ?? 10_000,
    cafKeyBits: partial.cafKeyBits ?? 1024,
    siiKeys: partial.siiKeys ?? {},
    triggers: partial.triggers ?? [],
    exchangeRates: partial.exchangeRates ?? [],
    ...(partial.stateFile ? { stateFile: partial.stateFile } : {}),
    clock: partial.clock ?? Date.now,
  };
}
