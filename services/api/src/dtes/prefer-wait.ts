import { classify } from '@dte/status';
import type { DataSource } from 'typeorm';
import { DTE_COLUMNS, type DteRow } from '@dte/emission';
import type { StatusWakeups } from './status-wakeups';

/** Longest `Prefer: wait=N` honoured (seconds); larger values are clamped to it. */
export const MAX_PREFER_WAIT_SEC = 60;

/** `Prefer: wait=N` (RFC 7240) → seconds, clamped to MAX_PREFER_WAIT_SEC; undefined when absent. */
export function parsePreferWait(header: string | undefined): number | undefined {
  if (!header) return undefined;
  for (const pref of header.split(',')) {
    const m = /^\s*wait\s*=\s*"?(\d+)"?\s*$/i.exec(pref.split(';')[0]);
    if (m) return Math.min(Number(m[1]), MAX_PREFER_WAIT_SEC);
  }
  return undefined;
}

/** Requests of one caller (API key or session user) that may wait at once in a process. */
export const MAX_PREFER_WAITERS_PER_CALLER = 4;
/** Requests that may wait at once in a process, all callers together. */
export const MAX_PREFER_WAITERS_PER_PROCESS = 200;

/**
 * Places to wait: `Prefer: wait` is a preference (RFC 7240), so a request that finds no place
 * (its caller already has MAX_PREFER_WAITERS_PER_CALLER waiting, or the process
 * MAX_PREFER_WAITERS_PER_PROCESS) answers at once, 202 without Preference-Applied: one caller
 * cannot hold the process's connections and database reads for everyone.
 */
export class WaitSlots {
  private total = 0;
  private readonly perCaller = new Map<string, number>();

  constructor(
    private readonly perCallerMax = MAX_PREFER_WAITERS_PER_CALLER,
    private readonly processMax = MAX_PREFER_WAITERS_PER_PROCESS,
  ) {}

  /** A release function when a place is free, else null. */
  take(caller: string): (() => void) | null {
    const mine = this.perCaller.get(caller) ?? 0;
    if (mine >= this.perCallerMax || this.total >= this.processMax) return null;
    this.perCaller.set(caller, mine + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const n = (this.perCaller.get(caller) ?? 1) - 1;
      if (n <= 0) this.perCaller.delete(caller);
      else this.perCaller.set(caller, n);
    };
  }

  get waiting(): number {
    return this.total;
  }
}

/** True once the send to the SII finished: the document has a track id. */
export function reachedSii(row: DteRow): boolean {
  return row.track_id !== null;
}

/** True when waiting longer cannot help: a verdict, or an outcome that needs someone to act. */
function settledElsewhere(row: DteRow): boolean {
  const e = classify(row.sii_status);
  return e.terminal || e.categoria === 'requiere_accion';
}

/** Re-read period of a waiting request when no notification came (a lost one, a broken listener). */
export const PREFER_WAIT_FALLBACK_MS = 5_000;

/**
 * Waits up to `seconds` for the document to reach the SII (track id recorded by the uploader);
 * stops early when the document ended without reaching it (e.g. emision_fallida). With
 * `wakeups`, the row is re-read when PostgreSQL notifies a change of this document (and every
 * PREFER_WAIT_FALLBACK_MS in case a notification is lost); without it, every `intervalMs` at
 * first, then less often (up to 1 s). Returns the last row read and whether it got there.
 */
export async function waitForSii(
  db: DataSource,
  row: DteRow,
  seconds: number,
  intervalMs = 200,
  wakeups?: StatusWakeups,
): Promise<{ row: DteRow; sent: boolean }> {
  const deadline = Date.now() + seconds * 1000;
  let current = row;
  const reread = async () => {
    const rows: DteRow[] = await db.query(`SELECT ${DTE_COLUMNS} FROM dtes WHERE id = $1`, [row.id]);
    if (rows[0]) current = rows[0];
  };
  const done = () => reachedSii(current) || settledElsewhere(current) || Date.now() >= deadline;
  if (wakeups && !done()) {
    let woken = false;
    let wake: () => void = () => (woken = true);
    const off = await wakeups.subscribe(row.id, () => wake());
    try {
      await reread(); // a change that committed before LISTEN was in place
      while (!done()) {
        if (!woken) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(
              done_,
              Math.min(PREFER_WAIT_FALLBACK_MS, Math.max(0, deadline - Date.now())),
            );
            function done_() {
              clearTimeout(t);
              resolve();
            }
            wake = done_;
          });
        }
        woken = false;
        wake = () => (woken = true);
        await reread();
      }
    } finally {
      off();
    }
    return { row: current, sent: reachedSii(current) };
  }
  let every = intervalMs;
  while (!done()) {
    await new Promise((r) => setTimeout(r, Math.min(every, Math.max(0, deadline - Date.now()))));
    // reads slow down the longer it waits: 200 ms, then ×1.5 up to 1 s
    every = Math.min(1000, Math.round(every * 1.5));
    await reread();
  }
  return { row: current, sent: reachedSii(current) };
}
