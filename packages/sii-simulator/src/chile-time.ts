/**
 * The SII lives in Chile: the dates and times it writes (RECEPCIONDTE TIMESTAMP, NUM_ATENCION,
 * register event times, a CAF's FA) and the "today" of its date rules are America/Santiago.
 */
import { santiagoDate, santiagoWallClockAsUtc } from '@dte/engine';

/** YYYY-MM-DD in Chile */
export function chileDate(ms: number): string {
  return santiagoDate(new Date(ms));
}

/** YYYY-MM-DD HH:MM:SS in Chile */
export function chileDateTime(ms: number): string {
  return new Date(santiagoWallClockAsUtc(ms)).toISOString().slice(0, 19).replace('T', ' ');
}
