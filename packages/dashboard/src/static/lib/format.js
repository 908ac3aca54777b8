// @ts-check
// Chilean formats for everything shown: CLP amounts, dd-mm-aaaa dates in Chile's time, roles and
// environments in Spanish.

const ZONA = 'America/Santiago';

/**
 * An amount in pesos: $23.800.
 * @param {unknown} n
 */
export function clp(n) {
  return '$' + Math.round(Number(n) || 0).toLocaleString('es-CL');
}

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
 * @param {string | null | undefined} iso
 */
export function fecha(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
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
export const MESES = [
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
];

/**
 * A month of the api (YYYY-MM) in words: "noviembre de 2026"; anything else as given.
 * @param {string} periodo
 */
export function mes(periodo) {
  const m = /^(\d{4})-(\d{2})$/.exec(periodo);
  const name = m && MESES[Number(m[2]) - 1];
  return m && name ? `${name} de ${m[1]}` : periodo;
}

/**
 * A whole number with es-CL thousands: 1.234.
 * @param {unknown} n
 */
export const entero = (n) => Number(n).toLocaleString('es-CL');

/** Today in Chile as the api's YYYY-MM-DD. */
export function hoy() {
  const d = new Date();
  const p = new Intl.DateTimeFormat('en-CA', { timeZone: ZONA }).format(d);
  return /^\d{4}-\d{2}-\d{2}$/.test(p)
    ? p
    : `${d.getFullYear()}-${dos(d.getMonth() + 1)}-${dos(d.getDate())}`;
}

/** @type {Record<string, string>} */
export const ROLES = { owner: 'Dueño', admin: 'Administrador', member: 'Miembro' };

/** @param {string} role */
export const rol = (role) => ROLES[role] || role;

/** @param {string | null | undefined} e */
export const ambiente = (e) => (e === 'prod' ? 'Producción' : e === 'cert' ? 'Certificación' : e || '—');

/** @type {Record<string, string>} */
const TIPOS = {
  33: 'Factura electrónica',
  34: 'Factura exenta',
  39: 'Boleta electrónica',
  41: 'Boleta exenta',
  46: 'Factura de compra',
  52: 'Guía de despacho',
  56: 'Nota de débito',
  61: 'Nota de crédito',
  110: 'Factura de exportación',
  111: 'Nota de débito de exportación',
  112: 'Nota de crédito de exportación',
};

/**
 * The document type in words: "Factura electrónica (33)".
 * @param {number | string} tipo
 */
export function tipoDte(tipo) {
  const name = TIPOS[String(tipo)];
  return name ? `${name} (${tipo})` : `Tipo ${tipo}`;
}

/** @param {string | number} tipo */
export const nombreTipo = (tipo) => TIPOS[String(tipo)] || `Documento tipo ${tipo}`;
