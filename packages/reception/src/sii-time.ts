/**
 * The SII writes times in Chile (America/Santiago), e.g. consultarFechaRecepcionSii answers
 * `DD-MM-YYYY HH:MM:SS`. `parseSiiDateTime` turns that into the instant it names.
 */
import { santiagoInstant } from '@dte/engine';

/** `DD-MM-YYYY HH:MM:SS` (Chilean time) → Date; null when the text is not that. */
export function parseSiiDateTime(text: string): Date | null {
  const m = /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const t = santiagoInstant(+m[3]!, +m[2]!, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(t.getTime()) ? null : t;
}
