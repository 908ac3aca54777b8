/**
 * The simulator's configuration from the environment (when run as its own process):
 *
 *   SII_SIMULATOR_PORT (18080), SII_SIMULATOR_HOST (127.0.0.1)
 *   SII_SIMULATOR_AUTO_ENROL (false)          any authenticated RUT may act for any company
 *   SII_SIMULATOR_REGISTER_MS (2000)          QueryEstUp answers -11 this long after an upload
 *   SII_SIMULATOR_STEP_MS (1000)              each intermediate state lasts this long
 *   SII_SIMULATOR_SEED_TTL_MS (120000), SII_SIMULATOR_TOKEN_TTL_MS (3600000)
 *   SII_SIMULATOR_REPARO_DAYS (60), SII_SIMULATOR_MAX_UPLOAD_BYTES (10485760)
 *   SII_SIMULATOR_CAF_KEY_BITS (1024)
 *   SII_SIMULATOR_KEYS_FILE                   JSON { cert: SiiKey, prod: SiiKey } as GET /admin/sii-keys
 *                                             returns it; when the file does not exist, the keys made
 *                                             at start are written there (stable across restarts)
 *   SII_SIMULATOR_TRIGGERS                    JSON array of triggers armed at start
 *   SII_SIMULATOR_EXCHANGE_RATES_FILE         JSON { rates: [{ moneda, fecha, valor }] } set at start
 *                                             (npm start uses seed/exchange-rates.json)
 *   SII_SIMULATOR_STATE_FILE                  keeps the state (enrolments, folios, uploads ...) in this
 *                                             file across restarts; POST /admin/reset forgets it
 *                                             (npm start: .stack/data/sii-simulator/state.snapshot)
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse, readConfig } from '@dte/service-runtime';
import type { SiiKey } from './engine';
import type { SimulatorOptions } from './options';
import type { ExchangeRate } from './state';
import { parseTrigger, type Trigger } from './triggers';
import type { SiiEnv } from './types';

export function readSimulatorConfig(env: NodeJS.ProcessEnv = process.env): Partial<SimulatorOptions> {
  const c = readConfig(
    {
      port: { env: 'SII_SIMULATOR_PORT', default: 18080, parse: parse.port },
      host: { env: 'SII_SIMULATOR_HOST', default: '127.0.0.1' },
      autoEnrol: { env: 'SII_SIMULATOR_AUTO_ENROL', default: false, parse: parse.bool },
      registerMs: { env: 'SII_SIMULATOR_REGISTER_MS', default: 2000, parse: nonNegative },
      stepMs: { env: 'SII_SIMULATOR_STEP_MS', default: 1000, parse: nonNegative },
      seedTtlMs: { env: 'SII_SIMULATOR_SEED_TTL_MS', default: 120_000, parse: nonNegative },
      tokenTtlMs: { env: 'SII_SIMULATOR_TOKEN_TTL_MS', default: 3_600_000, parse: nonNegative },
      reparoDays: { env: 'SII_SIMULATOR_REPARO_DAYS', default: 60, parse: nonNegative },
      maxUploadBytes: {
        env: 'SII_SIMULATOR_MAX_UPLOAD_BYTES',
        default: 10 * 1024 * 1024,
        parse: nonNegative,
      },
      cafKeyBits: { env: 'SII_SIMULATOR_CAF_KEY_BITS', default: 1024, parse: nonNegative },
      keysFile: { env: 'SII_SIMULATOR_KEYS_FILE', required: false, default: undefined as string | undefined },
      stateFile: {
        env: 'SII_SIMULATOR_STATE_FILE',
        required: false,
        default: undefined as string | undefined,
      },
      exchangeRatesFile: {
        env: 'SII_SIMULATOR_EXCHANGE_RATES_FILE',
        required: false,
        default: undefined as string | undefined,
      },
      triggers: {
        env: 'SII_SIMULATOR_TRIGGERS',
        required: false,
        default: [] as Trigger[],
        parse: parseTriggers,
      },
    },
    env,
  );
  // a keys file that does not exist yet is written by main.ts with the keys made at start
  const siiKeys: Partial<Record<SiiEnv, SiiKey>> =
    c.keysFile && existsSync(c.keysFile)
      ? (JSON.parse(readFileSync(c.keysFile, 'utf8')) as Partial<Record<SiiEnv, SiiKey>>)
      : {};
  return {
    port: c.port,
    host: c.host,
    autoEnrol: c.autoEnrol,
    timings: { registerMs: c.registerMs, stepMs: c.stepMs },
    seedTtlMs: c.seedTtlMs,
    tokenTtlMs: c.tokenTtlMs,
    reparoDays: c.reparoDays,
    maxUploadBytes: c.maxUploadBytes,
    cafKeyBits: c.cafKeyBits,
    siiKeys,
    triggers: c.triggers,
    exchangeRates: c.exchangeRatesFile ? readExchangeRates(c.exchangeRatesFile) : [],
    ...(c.stateFile ? { stateFile: c.stateFile } : {}),
  };
}

/** Rates of a seed file, checked as PUT /admin/exchange-rates checks one; throws naming the file. */
export function readExchangeRates(file: string): ExchangeRate[] {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { rates?: unknown };
  if (!Array.isArray(doc.rates)) throw new Error(`${file}: expected { "rates": [ ... ] }`);
  return doc.rates.map((r: { moneda?: unknown; fecha?: unknown; valor?: unknown }, i: number) => {
    const moneda = String(r.moneda ?? '');
    const fecha = String(r.fecha ?? '');
    const valor = Number(r.valor);
    if (!/^[A-Z]{3}$/.test(moneda) || !/^\d{4}-\d{2}-\d{2}$/.test(fecha) || !(valor > 0))
      throw new Error(`${file}: rates[${i}] needs moneda (ISO 4217), fecha (YYYY-MM-DD), valor > 0`);
    return { moneda, fecha, valor };
  });
}

function nonNegative(raw: string): number {
  const n = parse.int(raw);
  if (n < 0) throw new Error(`expected a non-negative integer, got ${n}`);
  return n;
}

function parseTriggers(raw: string): Trigger[] {
  const list = JSON.parse(raw) as unknown;
  if (!Array.isArray(list)) throw new Error('expected a JSON array of triggers');
  return list.map(parseTrigger);
}
