// @ts-check
// /miembros: the organization's members (owners change roles and remove), access requests.
import { currentOrganization } from '../lib/chrome.js';
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { fecha, rol, ROLES } from '../lib/format.js';

/** @type {Record<string, string>} */
const DECISION = {
  aprobada: 'aprobada',
  rechazada: 'rechazada',
  approved: 'aprobada',
  rejected: 'rechazada',
};

/** @type {import('./index.js').PageRun} */
export default async function miembros(me) {
  const res = await api('GET', '/organizations/me/miembros', { noEnv: true });
  if (!res.ok) return notice('error', describe(res));
  const mine = currentOrganization(me);
  const isOwner = !!mine && mine.role === 'owner';
  /**
   * @param {{ user_id: string, email: string }} m
   * @param {string | null} nuevo the new role, or null to remove
   */
  const change = async (m, nuevo) => {
    const r = nuevo
      ? await api('PUT', `/organizations/me/miembros/${m.user_id}`, { noEnv: true, json: { rol: nuevo } })
      : await api('DELETE', `/organizations/me/miembros/${m.user_id}`, { noEnv: true });
    if (!r.ok) return notice('error', describe(r));
    notice('ok', nuevo ? `Rol de ${m.email}: ${rol(nuevo)}.` : `${m.email} ya no es miembro.`);
    miembros(me);
  };
  /** @param {{ user_id: string, email: string, role: string }} m */
  const roleCell = (m) => {
    if (!isOwner || !me || m.user_id === me.user.id) return rol(m.role);
    const sel = h(
      'select',
      {
        'aria-label': `Rol de ${m.email}`,
        onchange: (e) => change(m, /** @type {HTMLSelectElement} */ (e.target).value),
      },
      ...Object.entries(ROLES).map(([r, words]) => h('option', { value: r, selected: r === m.role }, words)),
    );
    const quitar = h(
      'button',
      {
        type: 'button',
        class: 'peligro',
        onclick: () => confirm(`¿Quitar a ${m.email}?`) && change(m, null),
      },
      'Quitar',
    );
    return h('span', { class: 'actions' }, sel, quitar);
  };
  /** @type {any[]} */
  const data = res.body.data;
  fill(
    el('#tabla-miembros tbody', HTMLTableSectionElement),
    data.map((m) =>
      h(
        'tr',
        {},
        h('td', {}, m.email),
        h('td', {}, m.name || '—'),
        h('td', {}, roleCell(m)),
        h('td', {}, fecha(m.since)),
      ),
    ),
    'Sin miembros.',
  );
  const solicitudes = el('#tabla-solicitudes tbody', HTMLTableSectionElement);
  if (!isOwner) {
    fill(solicitudes, [], 'Solo los dueños ven y deciden las solicitudes.');
    return;
  }
  const load = async () => {
    const r = await api('GET', '/organizations/me/solicitudes-acceso', { noEnv: true });
    if (!r.ok) return notice('error', describe(r));
    /**
     * @param {string} token
     * @param {'aprobar' | 'rechazar'} decision
     */
    const decide = async (token, decision) => {
      const x = await api('POST', '/organizations/solicitudes-acceso/decidir', {
        noEnv: true,
        json: { token, decision },
      });
      if (!x.ok) return notice('error', describe(x));
      notice('ok', `Solicitud ${DECISION[x.body.estado] || x.body.estado}.`);
      load();
    };
    /** @type {any[]} */
    const pending = r.body.data;
    fill(
      solicitudes,
      pending.map((s) =>
        h(
          'tr',
          {},
          h('td', {}, s.requester_email),
          h('td', {}, fecha(s.created_at)),
          h('td', {}, fecha(s.expires_at)),
          h(
            'td',
            { class: 'actions' },
            h('button', { type: 'button', onclick: () => decide(s.token, 'aprobar') }, 'Aprobar'),
            h(
              'button',
              { type: 'button', class: 'peligro', onclick: () => decide(s.token, 'rechazar') },
              'Rechazar',
            ),
          ),
        ),
      ),
      'No hay solicitudes pendientes.',
    );
  };
  return load();
}
