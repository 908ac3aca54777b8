/**
 * Calendar dates in Chile. The fecha_emision window is a rule about the Chilean calendar, so
 * "today" is the date in zone America/Santiago at the injected instant, not the UTC date.
 */

const SANTIAGO = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/**
 * The last answer, by whole UTC second: every emission asks for today's date (fecha_emision
 * default and window) and formatToParts costs far more than the look-up. Exact: time zone offsets
 * and their transitions are whole seconds, so the local date cannot change inside one UTC second.
 */
let cachedSecond = Number.NaN;
let cachedDate = '';

/** YYYY-MM-DD of `now` in America/Santiago. */
export function santiagoDate(now: Date): string {
  const second = Math.floor(now.getTime() / 1000);
  if (second === cachedSecond) return cachedDate;
  const parts = Object.fromEntries(SANTIAGO.formatToParts(now).map((p) => [p.type, p.value]));
  cachedDate = `${parts.year}-${parts.month}-${parts.day}`;
  cachedSecond = second;
  return cachedDate;
}

/** Calendar arithmetic on YYYY-MM-DD (no time zone involved). */
export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number);
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return t.toISOString().slice(0, 10);
}

export function firstDayOfMonth(date: string): string {
  return `${date.slice(0, 8)}01`;
}

export interface DateWindow {
  from: string;
  to: string;
}

/**
 * The fecha_emision window of the spec: from day 1 of the current month (type 52: from today)
 * through today+7, both ends included, in America/Santiago.
 */
export function fechaEmisionWindow(now: Date, tipoDte: number): DateWindow {
  const today = santiagoDate(now);
  return { from: tipoDte === 52 ? today : firstDayOfMonth(today), to: addDays(today, 7) };
}

/**
 * The fecha_emision window of a boleta (39/41): a boleta is issued at the sale (DL 825 art. 55:
 * when the goods are delivered or the service paid) and goes to the SII as it is issued, so it
 * is never dated ahead, and never in a tax period already closed: from day 1 of the current
 * month (or yesterday, when that is earlier: a sale just before midnight on the last day of the
 * month posted just after it) through today, both ends included, in America/Santiago.
 */
export function boletaFechaWindow(now: Date): DateWindow {
  const today = santiagoDate(now);
  const yesterday = addDays(today, -1);
  const first = firstDayOfMonth(today);
  return { from: yesterday < first ? yesterday : first, to: today };
}
