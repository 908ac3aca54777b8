/**
 * The simulator's memory on disk, as the real SII never forgets: SimulatorState (companies and
 * their enrolled senders, granted and used folios, uploads and their verdicts, seeds, tokens,
 * exchange rates, armed triggers, the clock offset) written to one JSON file, read back at start.
 * POST /admin/reset empties the state, and the next save writes the empty state: it is the only
 * way to forget.
 *
 * Generic on purpose, so state added to state.ts later is kept without touching this file: every
 * data property of the state objects is written (Map, Set, Date, Buffer and bigint tagged so they
 * come back as themselves), functions and promises are skipped; reading assigns each saved
 * property onto the fresh objects of a new SimulatorState (filling Maps, Sets and arrays in
 * place, recursing into nested class instances), so a property the file lacks keeps its default.
 *
 * Writes are atomic (temporary file, then rename) and happen when the state changed: checked every
 * `intervalMs` and on close. A kill -9 loses at most the last interval.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import type { SimulatorState } from './state';

const FORMAT = 1;

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = key === '' ? value : this[key];
  if (typeof raw === 'function' || raw instanceof Promise) return undefined;
  if (raw instanceof Map) return { $map: [...raw.entries()] };
  if (raw instanceof Set) return { $set: [...raw.values()] };
  if (raw instanceof Date) return { $date: raw.toISOString() };
  if (Buffer.isBuffer(raw) || raw instanceof Uint8Array) return { $b64: Buffer.from(raw).toString('base64') };
  if (typeof raw === 'bigint') return { $bigint: raw.toString() };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    const keys = Object.keys(v);
    if (keys.length === 1) {
      if ('$map' in v) return new Map(v.$map as [unknown, unknown][]);
      if ('$set' in v) return new Set(v.$set as unknown[]);
      if ('$date' in v) return new Date(v.$date as string);
      if ('$b64' in v) return Buffer.from(v.$b64 as string, 'base64');
      if ('$bigint' in v) return BigInt(v.$bigint as string);
    }
  }
  return value;
}

export function encodeState(state: SimulatorState): string {
  return JSON.stringify({ format: FORMAT, state }, replacer);
}

/** Assigns what was saved onto `target`, keeping its classes and its defaults for what is absent. */
function restoreInto(target: Record<string, unknown>, saved: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(saved)) {
    const current = target[key];
    if (typeof current === 'function' || current instanceof Promise) continue;
    if (current instanceof Map && value instanceof Map) {
      current.clear();
      for (const [k, v] of value) current.set(k, v);
    } else if (current instanceof Set && value instanceof Set) {
      current.clear();
      for (const v of value) current.add(v);
    } else if (Array.isArray(current) && Array.isArray(value)) {
      current.splice(0, current.length, ...(value as unknown[]));
    } else if (
      current !== null &&
      typeof current === 'object' &&
      !(current instanceof Date) &&
      !Buffer.isBuffer(current) &&
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value)
    ) {
      restoreInto(current as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      target[key] = value;
    }
  }
}

/** Reads the file into `state` (nothing when it does not exist); throws naming the file when it is unreadable. */
export function loadState(state: SimulatorState, file: string): boolean {
  if (!existsSync(file)) return false;
  let doc: { format?: unknown; state?: unknown };
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'), reviver) as typeof doc;
  } catch (err) {
    throw new Error(
      `${file}: the saved simulator state cannot be read (${(err as Error).message}); move it away to start empty`,
    );
  }
  if (doc.format !== FORMAT || typeof doc.state !== 'object' || doc.state === null)
    throw new Error(`${file}: not a simulator state of format ${FORMAT}; move it away to start empty`);
  restoreInto(state as unknown as Record<string, unknown>, doc.state as Record<string, unknown>);
  return true;
}

export interface StateSaver {
  /** writes now if the state changed since the last write */
  flush(): void;
  /** stops the periodic check after a last flush */
  stop(): void;
}

/** Saves `state` to `file` whenever it changed, checked every `intervalMs`. */
export function keepStateIn(state: SimulatorState, file: string, intervalMs = 500): StateSaver {
  mkdirSync(path.dirname(file), { recursive: true });
  let last = existsSync(file) ? '' : undefined;
  const flush = () => {
    const text = encodeState(state);
    if (text === last) return;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
    last = text;
  };
  flush();
  const timer = setInterval(flush, intervalMs);
  timer.unref();
  return {
    flush,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}
