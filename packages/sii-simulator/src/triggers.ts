/**
 * Deterministic triggers: the way tests (and users rehearsing failures) drive every path the
 * real SII can take. Each trigger is consumed by the next matching request(s) of its
 * environment (or of either environment when `env` is omitted). Upload triggers apply one per
 * upload, in the order they were armed (an upload answered STATUS 5/1/6/2 consumes none).
 *
 *   { kind: 'verdict', verdict: 'RSC'|'RFR'|'RCT'|'RCO'|'RPT'|'VOF'|'RCH'|'RPR' }  next upload gets
 *        that outcome (RCH/RPR: every document of the envelope is rejected / gets reparos, envelope
 *        EPR; RCO/RPT/VOF: the other rejections of a whole send the boleta REST status names)
 *   { kind: 'repeated' }              next upload is answered as already received (STATUS 99)
 *   { kind: 'upload-status', status } next upload is answered with that RECEPCIONDTE STATUS
 *   { kind: 'stuck' }                 next upload answers -11 to QueryEstUp for ever
 *   { kind: 'http-error', operation, status?: 500, times?: 1 }   HTTP 5xx ("Error 500" body)
 *   { kind: 'delay', operation, ms, times?: 1 }                  answer after `ms`
 *   { kind: 'drop', operation, times?: 1 }                       destroy the socket, no answer
 *
 * `operation` is one of OPERATIONS; `times` counts calls (default 1).
 */
import type { SiiEnv } from './types';

export const OPERATIONS = [
  'getSeed',
  'getToken',
  'upload',
  'getEstUp',
  'getEstDte',
  'ingresarAceptacionReclamoDoc',
  'listarEventosHistDoc',
  'consultarDocDteCedible',
  'consultarFechaRecepcionSii',
  'rcv',
  'folios',
  'tipoCambio',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export type UploadTrigger =
  | { kind: 'verdict'; verdict: 'RSC' | 'RFR' | 'RCT' | 'RCO' | 'RPT' | 'VOF' | 'RCH' | 'RPR' }
  | { kind: 'repeated' }
  | { kind: 'upload-status'; status: number }
  | { kind: 'stuck' };

export type FaultTrigger =
  | { kind: 'http-error'; operation: Operation; status?: number; times?: number }
  | { kind: 'delay'; operation: Operation; ms: number; times?: number }
  | { kind: 'drop'; operation: Operation; times?: number };

export type Trigger = (UploadTrigger | FaultTrigger) & { env?: SiiEnv };

export class TriggerError extends Error {}

const VERDICTS = ['RSC', 'RFR', 'RCT', 'RCO', 'RPT', 'VOF', 'RCH', 'RPR'];

/** Checks a trigger from JSON; throws TriggerError saying what is wrong. */
export function parseTrigger(raw: unknown): Trigger {
  if (typeof raw !== 'object' || raw === null) throw new TriggerError('a trigger is a JSON object');
  const t = raw as Record<string, unknown>;
  if (t.env !== undefined && t.env !== 'cert' && t.env !== 'prod')
    throw new TriggerError('env must be "cert" or "prod" (or omitted for both)');
  const env = t.env as SiiEnv | undefined;
  const times = t.times === undefined ? 1 : t.times;
  if (typeof times !== 'number' || !Number.isInteger(times) || times < 1)
    throw new TriggerError('times must be a positive integer');
  const op = t.operation as Operation;
  const needOp = () => {
    if (!OPERATIONS.includes(op)) throw new TriggerError(`operation must be one of ${OPERATIONS.join(', ')}`);
  };
  switch (t.kind) {
    case 'verdict':
      if (!VERDICTS.includes(String(t.verdict)))
        throw new TriggerError(`verdict must be one of ${VERDICTS.join(', ')}`);
      return { kind: 'verdict', verdict: t.verdict as 'RSC', env };
    case 'repeated':
      return { kind: 'repeated', env };
    case 'stuck':
      return { kind: 'stuck', env };
    case 'upload-status':
      if (typeof t.status !== 'number' || !Number.isInteger(t.status))
        throw new TriggerError('status must be an integer');
      return { kind: 'upload-status', status: t.status, env };
    case 'http-error': {
      needOp();
      const status = t.status === undefined ? 500 : t.status;
      if (typeof status !== 'number' || status < 500 || status > 599)
        throw new TriggerError('status must be 500-599');
      return { kind: 'http-error', operation: op, status, times, env };
    }
    case 'delay':
      needOp();
      if (typeof t.ms !== 'number' || t.ms < 0) throw new TriggerError('ms must be a non-negative number');
      return { kind: 'delay', operation: op, ms: t.ms, times, env };
    case 'drop':
      needOp();
      return { kind: 'drop', operation: op, times, env };
    default:
      throw new TriggerError(
        'kind must be one of verdict, repeated, upload-status, stuck, http-error, delay, drop',
      );
  }
}

/** Pending triggers; upload triggers apply once, fault triggers `times` times. */
export class TriggerQueue {
  private items: Trigger[] = [];

  add(t: Trigger): void {
    this.items.push({ ...t });
  }

  list(): Trigger[] {
    return this.items.map((t) => ({ ...t }));
  }

  clear(): void {
    this.items = [];
  }

  /** the first upload trigger pending for this environment, consumed (one per upload) */
  takeUploadTrigger(env: SiiEnv): UploadTrigger | undefined {
    const idx = this.items.findIndex((t) => isUpload(t) && (t.env === undefined || t.env === env));
    if (idx < 0) return undefined;
    return this.items.splice(idx, 1)[0] as UploadTrigger;
  }

  /** the first fault trigger for this call, with its count decremented (removed at zero) */
  takeFault(env: SiiEnv | undefined, operation: Operation): FaultTrigger | undefined {
    const idx = this.items.findIndex(
      (t) =>
        !isUpload(t) &&
        t.operation === operation &&
        (t.env === undefined || env === undefined || t.env === env),
    );
    if (idx < 0) return undefined;
    const t = this.items[idx] as FaultTrigger & { env?: SiiEnv };
    const left = (t.times ?? 1) - 1;
    if (left <= 0) this.items.splice(idx, 1);
    else t.times = left;
    return { ...t };
  }
}

function isUpload(t: Trigger): t is UploadTrigger & { env?: SiiEnv } {
  return t.kind === 'verdict' || t.kind === 'repeated' || t.kind === 'upload-status' || t.kind === 'stuck';
}
