/**
 * The SII writes times in Chile (America/Santiago), e.g. consultarFechaRecepcionSii answers
 * `DD-MM-YYYY HH:MM:SS`. `parseSiiDateTime` turns that into the instant it names.
 */
const PARTS = new Intl.DateTimeFormat('sv-SE', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

/** Chile's wall clock at `ms`, read as if it were UTC (ms). */
function wallClockAsUtc(ms: number): number {
  const p = Object.fromEntries(PARTS.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return Date.UTC(+p.year!, +p.month! - 1, +p.day!, p.hour === '24' ? 0 : +p.hour!, +p.minute!, +p.second!);
}

/** `DD-MM-YYYY HH:MM:SS` (Chilean time) → Date; null when the text is not that. */
export function parseSiiDateTime(text: string): Date | null {
  const m = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const asUtc = Date.UTC(+m[3]!, +m[2]! - 1, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
  // the offset at the guessed instant, applied twice to settle around a DST change
  let t = asUtc - (wallClockAsUtc(asUtc) - asUtc);
  t = asUtc - (wallClockAsUtc(t) - t);
  return Number.isNaN(t) ? null : new Date(t);
}
