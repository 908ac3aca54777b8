// @ts-check
// Chilean formats for everything shown: CLP amounts, dd-mm-aaaa dates in Chile's time, roles,
// environments and document types in Spanish.

// Amounts, numbers, dates and months: the one module of these rules, @dte/es-cl, which the
// dashboard serves as static/es-cl/index.js and the server (billing's mails, the printed form)
// imports.
export { clp, dia, diaApi, entero, fecha, hoy, MESES, mes } from '../es-cl/index.js';

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
