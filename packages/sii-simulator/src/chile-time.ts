/**
 * The SII lives in Chile: the dates and times it writes (RECEPCIONDTE TIMESTAMP, NUM_ATENCION,
 * register event times, a CAF's FA) and the "today" of its date rules are America/Santiago.
 */
import { santiagoDate } from '@dte/engine';

const DATE_TIME = new Intl.DateTimeFormat('sv-SE', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

/** YYYY-MM-DD in Chile */
export function chileDate(ms: number): string {
  return santiagoDate(new Date(ms));
}

/** YYYY-MM-DD HH:MM:SS in Chile */
export function chileDateTime(ms: number): string {
  const p = Object.fromEntries(DATE_TIME.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour === '24' ? '00' : p.hour}:${p.minute}:${p.second}`;
}
