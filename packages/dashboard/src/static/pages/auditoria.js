// @ts-check
// /auditoria: the audit log, newest first, one keyset page at a time; each entry in words: who
// (name or e-mail), what, and on what (certificate, API key, member, document).
import { api } from '../lib/api.js';
import { el, fill, h, notice, show } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { ambiente, fecha, rol } from '../lib/format.js';

/** @type {Record<string, string>} */
export const ACCIONES = {
  'user.signup': 'Creó su cuenta',
  'session.login': 'Ingresó al panel',
  'session.login_failed': 'Intento de ingreso fallido',
  'session.locked': 'Cuenta bloqueada por intentos fallidos',
  'session.logout': 'Salió del panel',
  'organization.created': 'Registró la empresa',
  'organization.situacion_revalidada': 'Revalidó la situación tributaria en el SII',
  'organization.production_enabled': 'Habilitó la emisión en producción',
  'company.updated': 'Actualizó los datos de la empresa',
  'member.role_changed': 'Cambió el rol de un miembro',
  'member.removed': 'Quitó a un miembro',
  'access_request.created': 'Solicitó acceso a la organización',
  'access_request.approved': 'Aprobó una solicitud de acceso',
  'access_request.rejected': 'Rechazó una solicitud de acceso',
  'api_key.created': 'Creó una API key',
  'api_key.revoked': 'Revocó una API key',
  'api_key.rotated': 'Rotó una API key',
  'certificate.uploaded': 'Subió un certificado de firma',
  'certificate.activated': 'Activó un certificado de firma',
  'certificate.deleted': 'Eliminó un certificado de firma',
};

/**
 * On what the action was done, from the names the api resolved and the entry's detail.
 * @param {any} a
 */
function sobre(a) {
  const d = a.detail || {};
  /** @type {string[]} */
  const parts = [];
  if (a.objeto) parts.push(a.objeto);
  if (d.rut) parts.push(`RUT ${d.rut}`);
  if (d.environment) parts.push(ambiente(d.environment));
  if (d.from && d.to) parts.push(`de ${rol(d.from)} a ${rol(d.to)}`);
  if (d.rol && a.action === 'access_request.approved') parts.push(`como ${rol(d.rol)}`);
  if (d.estado) parts.push(`situación: ${String(d.estado).replace(/_/g, ' ')}`);
  return parts.join(' · ') || '—';
}

/** @type {import('./index.js').PageRun} */
export default function auditoria() {
  // the page size may come in the address (1-100, default 50): /dashboard/auditoria?limit=20
  const pedido = new URLSearchParams(location.search).get('limit') ?? '';
  const limit = /^[0-9]{1,3}$/.test(pedido) ? pedido : '50';
  /** @type {string | null} */
  let cursor = null;
  const more = el('#btn-mas-auditoria', HTMLButtonElement);
  const tbody = el('#tabla-auditoria tbody', HTMLTableSectionElement);
  /** @param {boolean} append the older page after the rows shown (only while there is one) */
  async function load(append) {
    if (append && !cursor) return;
    const q = new URLSearchParams({ limit });
    if (append && cursor) q.set('cursor', cursor);
    const res = await api('GET', `/audit-log?${q}`, { noEnv: true });
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.data;
    const rows = data.map((a) =>
      h(
        'tr',
        { 'data-id': a.id, 'data-accion': a.action },
        h('td', { class: 'fecha' }, fecha(a.at)),
        h('td', {}, a.actor_nombre || a.actor),
        h('td', {}, ACCIONES[a.action] || a.action),
        h('td', {}, sobre(a)),
        h('td', {}, a.ip || '—'),
      ),
    );
    if (append) tbody.append(...rows);
    else fill(tbody, rows, 'Sin registros.');
    cursor = res.body.next_cursor || null;
    show(more, cursor !== null);
  }
  more.addEventListener('click', () => load(true));
  return load(false);
}
