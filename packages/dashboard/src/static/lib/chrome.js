// @ts-check
// The chrome of every page but the login: environment selector, who is signed in, logout.
import { api, currentPage, env } from './api.js';
import { rol } from './format.js';

/**
 * @typedef {object} Organizacion
 * @property {string} organization_id
 * @property {string} name
 * @property {string | null} rut
 * @property {string} role
 */
/**
 * @typedef {object} Me GET /auth/me
 * @property {{ id: string, email: string, name?: string | null }} user
 * @property {Organizacion[]} organizaciones
 * @property {string | null} organizacion_actual
 */

/**
 * Wires the header and answers who is signed in (null on the login page or without a session).
 * @returns {Promise<Me | null>}
 */
export async function chrome() {
  const page = currentPage();
  const sel = document.getElementById('sii-env');
  if (sel instanceof HTMLSelectElement) {
    sel.value = env();
    sel.addEventListener('change', () => {
      localStorage.setItem('sii_env', sel.value);
      location.reload();
    });
  }
  const out = document.getElementById('btn-salir');
  if (out) {
    out.addEventListener('click', async () => {
      await api('POST', '/auth/logout', { noEnv: true, keepAuthErrors: true });
      location.assign('/dashboard/ingresar');
    });
  }
  if (page === '/ingresar') return null;
  const me = await api('GET', '/auth/me', { noEnv: true });
  if (!me.ok) return null;
  /** @type {Me} */
  const body = me.body;
  const user = document.getElementById('usuario');
  const org = currentOrganization(body);
  if (user) user.textContent = `${body.user.email}${org ? ` · ${org.name} (${rol(org.role)})` : ''}`;
  if (!body.organizacion_actual && page !== '/organizacion') location.assign('/dashboard/organizacion');
  return body;
}

/**
 * The organization the session acts in.
 * @param {Me | null} me
 */
export function currentOrganization(me) {
  return (me && me.organizaciones.find((o) => o.organization_id === me.organizacion_actual)) || null;
}
