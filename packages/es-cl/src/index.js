// @ts-check
// Spanish (Chile) for everything shown to a user: CLP amounts ($1.234.567), whole numbers
// (1.234), dd-mm-aaaa dates, instants in Chile's time, months in words. THE one place of these
// rules: the server imports this module (@dte/es-cl: billing's mails, the printed form, the
// webhook mails) and the dashboard serves this same file to the browser (/dashboard/static/es-cl/
// index.js). Plain JavaScript with JSDoc types, no import: it runs unchanged in Node and in
// browsers; index.d.ts declares it to TypeScript (tsconfig.browser.json checks this file).

/** Chile's time zone: instants are shown in it, "today" is its date. */
export const ZONA = 'America/Santiago';

/**
 * An amount in pesos: $23.800.
 * @param {unknown} n
 */
export function clp(n) {
  return '$' + Math.round(Number(n) || 0).toLocaleString('es-CL');
}

/**
 * A whole number with es-CL thousands: 1.234.
 * @param {unknown} n
 */
export const entero = (n) => Number(n).toLocaleString('es-CL');

/** @param {number} n */
const dos = (n) => String(n).padStart(2, '0');

/**
 * A calendar date of the api (YYYY-MM-DD) as dd-mm-aaaa; anything else as given.
 * @param {string | null | undefined} ymd
 */
export function dia(ymd) {
  if (!ymd) return '—';
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(ymd);
  return m ? `${m[3]}-${m[2]}-${m[1]}` : ymd;
}

/**
 * A date typed as dd-mm-aaaa (also d-m-aaaa or with slashes) as the api's YYYY-MM-DD; null when
 * it is not a real calendar date.
 * @param {string} typed
 */
export function diaApi(typed) {
  const m = /^(\d{1,2})[-/](\d{1,2})[-/](\d{4})$/.exec(typed.trim());
  if (!m) return null;
  const [d, mo, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  return `${y}-${dos(mo)}-${dos(d)}`;
}

/**
 * An instant as dd-mm-aaaa hh:mm in Chile's time.
 * @param {string | Date | null | undefined} iso
 */
export function fecha(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  /** @type {Record<string, string>} */
  const p = {};
  for (const part of new Intl.DateTimeFormat('es-CL', {
    timeZone: ZONA,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d))
    p[part.type] = part.value;
  return `${p.day}-${p.month}-${p.year} ${p.hour}:${p.minute}`;
}

/** The months in Spanish, January first. */
export const MESES = Object.freeze([
  'enero',
  'febrero',
  'marzo',
  'abril',
  'mayo',
  'junio',
  'julio',
  'agosto',
  'septiembre',
  'octubre',
  'noviembre',
  'diciembre',
]);

/**
 * A month of the api (YYYY-MM) in words: "noviembre de 2026"; anything else as given.
 * @param {string} periodo
 */
export function mes(periodo) {
  const m = /^(\d{4})-(\d{2})$/.exec(periodo);
  const name = m && MESES[Number(m[2]) - 1];
  return m && name ? `${name} de ${m[1]}` : periodo;
}

/** Today in Chile as the api's YYYY-MM-DD. */
export function hoy() {
  const d = new Date();
  const p = new Intl.DateTimeFormat('en-CA', { timeZone: ZONA }).format(d);
  return /^\d{4}-\d{2}-\d{2}$/.test(p)
    ? p
    : `${d.getFullYear()}-${dos(d.getMonth() + 1)}-${dos(d.getDate())}`;
}
