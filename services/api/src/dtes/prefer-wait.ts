import { classify } from '@dte/status';
import type { DataSource } from 'typeorm';
import { DTE_COLUMNS, type DteRow } from './dte-row';

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

/** True once the send to the SII finished: the document has a track id. */
export function reachedSii(row: DteRow): boolean {
  return row.track_id !== null;
}

/** True when waiting longer cannot help: a verdict, or an outcome that needs someone to act. */
function settledElsewhere(row: DteRow): boolean {
  const e = classify(row.sii_status);
  return e.terminal || e.categoria === 'requiere_accion';
}

/**
 * Waits up to `seconds` for the document to reach the SII (track id recorded by the uploader),
 * re-reading the row every `intervalMs`; stops early when the document ended without reaching it
 * (e.g. emision_fallida). Returns the last row read and whether it got there.
 */
export async function waitForSii(
  db: DataSource,
  row: DteRow,
  seconds: number,
  intervalMs = 200,
): Promise<{ row: DteRow; sent: boolean }> {
  const deadline = Date.now() + seconds * 1000;
  let current = row;
  while (!reachedSii(current) && !settledElsewhere(current) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
    const rows: DteRow[] = await db.query(`SELECT ${DTE_COLUMNS} FROM dtes WHERE id = $1`, [row.id]);
    if (rows[0]) current = rows[0];
  }
  return { row: current, sent: reachedSii(current) };
}
