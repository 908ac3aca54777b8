/**
 * The simulator's memory on disk, as the real SII never forgets: SimulatorState (companies and
 * their enrolled senders, granted and used folios, uploads and their verdicts, seeds, tokens,
 * exchange rates, armed triggers, the clock offset) written to one file, read back at start.
 * POST /admin/reset empties the state, and the next save writes the empty state: it is the only
 * way to forget.
 *
 * Generic on purpose, so state added to state.ts later is kept without touching this file: every
 * data property of the state's objects is written, functions and promises skipped, and the
 * collections they hold (Maps, Sets, arrays of Dates, Buffers, bigints, plain records) go to V8's
 * structured serializer as they are: it keeps those types, and an object reached twice (a document in its
 * upload and in the documents map) comes back as one object. Reading assigns each saved property
 * onto the fresh objects of a new SimulatorState (filling Maps, Sets and arrays in place,
 * recursing into nested class instances), so a property the file lacks keeps its default. A file
 * of the first format (JSON, tagged Maps and Sets) is still read.
 *
 * Writes are atomic (temporary file, then rename). The server marks the state changed after each
 * request (`touch`); a changed state is written at most every `intervalMs`, and never more often
 * than twenty times the last write's duration, so saving a large state costs at most about 5 % of
 * one core however long the SII's memory grows (35 000 documents: ~20 MB). An unchanged state
 * costs nothing. `flush` (and the close) write at once. A kill -9 loses at most the last interval.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';

import type { SimulatorState } from './state';

const FORMAT = 2;
/** the first format: JSON, Maps, Sets, Dates, Buffers and bigints tagged (still read) */
const JSON_FORMAT = 1;

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

/** the first bytes of a file of the current format, before V8's serialization of the state */
const MAGIC = Buffer.from('DTE-SII-SIMULATOR-STATE 2\n');

/**
 * The data properties of the state's objects (class instances and the records that hold them),
 * recursively down to the collections: Maps, Sets, arrays and what they hold go to V8 as they are.
 */
function dataOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (
    value instanceof Map ||
    value instanceof Set ||
    value instanceof Date ||
    Array.isArray(value) ||
    ArrayBuffer.isView(value)
  )
    return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'function' || v instanceof Promise) continue;
    out[key] = dataOf(v);
  }
  return out;
}

export function encodeState(state: SimulatorState): Buffer {
  return Buffer.concat([MAGIC, serialize(dataOf(state))]);
}

/** the saved state of a file of either format */
function decodeState(bytes: Buffer): { format?: unknown; state?: unknown } {
  if (bytes.subarray(0, MAGIC.length).equals(MAGIC))
    return { format: FORMAT, state: deserialize(bytes.subarray(MAGIC.length)) as unknown };
  return JSON.parse(bytes.toString('utf8'), reviver) as { format?: unknown; state?: unknown };
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
    doc = decodeState(readFileSync(file));
  } catch (err) {
    throw new Error(
      `${file}: the saved simulator state cannot be read (${(err as Error).message}); move it away to start empty`,
    );
  }
  if (
    (doc.format !== FORMAT && doc.format !== JSON_FORMAT) ||
    typeof doc.state !== 'object' ||
    doc.state === null
  )
    throw new Error(`${file}: not a simulator state of format ${FORMAT}; move it away to start empty`);
  restoreInto(state as unknown as Record<string, unknown>, doc.state as Record<string, unknown>);
  return true;
}

export interface StateSaver {
  /** the state changed (the server calls it after each request): written within the interval */
  touch(): void;
  /** writes now if the state changed since the last write */
  flush(): void;
  /** stops the periodic check after a last flush */
  stop(): void;
}

/** Saves `state` to `file` when it changed: checked every `intervalMs`, paced by the write's cost. */
export function keepStateIn(state: SimulatorState, file: string, intervalMs = 500): StateSaver {
  mkdirSync(path.dirname(file), { recursive: true });
  let last: Buffer | undefined;
  let changed = true;
  let notBefore = 0;
  const write = () => {
    const started = performance.now();
    changed = false;
    const bytes = encodeState(state);
    if (last?.equals(bytes)) return;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o600 });
    renameSync(tmp, file);
    last = bytes;
    const now = performance.now();
    notBefore = now + 19 * (now - started);
  };
  write();
  const timer = setInterval(() => {
    if (changed && performance.now() >= notBefore) write();
  }, intervalMs);
  timer.unref();
  return {
    touch() {
      changed = true;
    },
    flush: write,
    stop() {
      clearInterval(timer);
      write();
    },
  };
}
