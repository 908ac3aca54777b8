// @ts-check
// sii_status in a taxpayer's words ("Aceptado por el SII (EPR)", "En cola"). The words come from
// the one classification table (@dte/status statusInWords), embedded by the server in every page
// as <script type="application/json" id="estados-sii">: the dashboard holds no second copy.

/** @typedef {{ texto: string, categoria: string }} Estado */

/** @type {Record<string, Estado> | null} */
let vocabulario = null;

/** @returns {Record<string, Estado>} */
function tabla() {
  if (!vocabulario) {
    const node = document.getElementById('estados-sii');
    vocabulario = node && node.textContent ? JSON.parse(node.textContent) : {};
  }
  return /** @type {Record<string, Estado>} */ (vocabulario);
}

/**
 * The status in words, the SII's code beside when it is one.
 * @param {string | null | undefined} code
 */
export function estadoTexto(code) {
  if (!code) return '—';
  return tabla()[code]?.texto ?? `Código desconocido del SII (${code})`;
}

/**
 * en_proceso, aceptado, rechazado, requiere_accion, archivistico (the badge's colour).
 * @param {string | null | undefined} code
 */
export function estadoCategoria(code) {
  return (code && tabla()[code]?.categoria) || 'en_proceso';
}
