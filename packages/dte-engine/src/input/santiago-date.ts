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

/**
 * The instant the Chilean calendar day `date` (YYYY-MM-DD) ends: the first instant whose date in
 * America/Santiago is the next day. Found by bisection over the hours around it, so a day that
 * starts at 01:00 (Chile's daylight-saving change happens at midnight) is handled too.
 */
export function santiagoDayEnd(date: string): Date {
  const next = addDays(date, 1);
  const [y, m, d] = next.split('-').map(Number);
  // Chile's offsets lie between UTC-6 and UTC-2: the boundary is within [00:00Z, 07:00Z] of `next`
  let lo = Date.UTC(y, m - 1, d, 0, 0, 0);
  let hi = Date.UTC(y, m - 1, d, 7, 0, 0);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (santiagoDate(new Date(mid)) >= next) hi = mid;
    else lo = mid;
  }
  return new Date(santiagoDate(new Date(lo)) >= next ? lo : hi);
}

/**
 * The receiver's window of Ley 19.983 art. 4 (as amended by Ley 20.956): eight calendar days
 * following the day the SII received the document ("dentro de los ocho días corridos siguientes
 * a su recepción"), counted as the civil code counts terms (art. 48: whole days, running to
 * midnight of the last one), in Chile's calendar. Received any time on day D, the window closes
 * when day D + 8 ends in America/Santiago. The one rule the purchases side and the SII
 * simulator share.
 */
export const ACUSE_PLAZO_DIAS = 8;

export function acuseReciboDeadline(receivedAt: Date): Date {
  return santiagoDayEnd(addDays(santiagoDate(receivedAt), ACUSE_PLAZO_DIAS));
}

const SANTIAGO_CLOCK = new Intl.DateTimeFormat('sv-SE', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

/** Chile's wall clock at instant `ms`, read as if it were UTC (ms): its offset is the difference. */
export function santiagoWallClockAsUtc(ms: number): number {
  const p = Object.fromEntries(SANTIAGO_CLOCK.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return Date.UTC(+p.year!, +p.month! - 1, +p.day!, p.hour === '24' ? 0 : +p.hour!, +p.minute!, +p.second!);
}

/**
 * The instant at which Chile's wall clock reads the given date and time (the SII writes its
 * date-times that way). The offset is applied twice, so a time next to a daylight-saving change
 * settles on the offset in force at that instant.
 */
export function santiagoInstant(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): Date {
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  let t = asUtc - (santiagoWallClockAsUtc(asUtc) - asUtc);
  t = asUtc - (santiagoWallClockAsUtc(t) - t);
  return new Date(t);
}
