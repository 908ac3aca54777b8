// @ts-check
// The scopes (of API keys and of agents' OAuth grants) in words. The scopes and their words come
// from the one table (@dte/tenancy SCOPES and SCOPE_WORDS), embedded by the server in every page
// as <script type="application/json" id="permisos">: the dashboard holds no second copy.

/** @typedef {{ apiKey: string[], palabras: Record<string, string> }} Permisos */

/** @type {Permisos | null} */
let tabla = null;

/** @returns {Permisos} */
function permisos() {
  if (!tabla) {
    const node = document.getElementById('permisos');
    tabla = node && node.textContent ? JSON.parse(node.textContent) : { apiKey: [], palabras: {} };
  }
  return /** @type {Permisos} */ (tabla);
}

/** What a new API key is not given unless asked: the purchases side and the plan. */
const OPCIONALES = new Set(['rcv:read', 'recepcion:read', 'recepcion:write', 'billing:read']);

/**
 * The scopes an API key may have (spec, Authentication 2), in the form's order; `checked` marks
 * the form's default.
 * @returns {{ scope: string, checked: boolean }[]}
 */
export const permisosApiKey = () =>
  permisos().apiKey.map((scope) => ({ scope, checked: !OPCIONALES.has(scope) }));

/**
 * A scope in words: "Ver documentos" (the scope itself when unknown).
 * @param {string} scope
 */
export const permiso = (scope) => permisos().palabras[scope] || scope;
