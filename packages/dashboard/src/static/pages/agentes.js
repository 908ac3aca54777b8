// @ts-check
// /agentes: the organization's MCP connections with a "Desconectar" button each, and the MCP
// audit log for owners and admins (the api answers 403 to members: the section is hidden). The api
// decides who sees and revokes what.
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { ambiente, fecha } from '../lib/format.js';
import { herramienta } from '../lib/herramientas.js';
import { permiso } from '../lib/permisos.js';

/** @type {Record<string, string>} */
const RESULTADO = { ok: 'Realizada', error: 'Rechazada', pending: 'Esperando aprobación' };

/** @type {import('./index.js').PageRun} */
export default function agentes() {
  const conexionesBody = el('#tabla-agentes tbody', HTMLTableSectionElement);
  const auditoriaBody = el('#tabla-mcp-auditoria tbody', HTMLTableSectionElement);
  const seccion = el('#seccion-mcp-auditoria', HTMLElement);
  const mas = el('#btn-mas-mcp-auditoria', HTMLButtonElement);

  /**
   * The "Desconectar" button of an active connection.
   * @param {any} c
   */
  const desconectar = (c) => {
    const nombre = c.client_name || c.client_id;
    const button = h(
      'button',
      {
        type: 'button',
        class: 'peligro',
        'data-revocar': c.id,
        'aria-label': `Desconectar ${nombre} de ${c.user_email}`,
        onclick: async () => {
          if (!confirm(`¿Desconectar «${nombre}»? Dejará de tener acceso de inmediato.`)) return;
          button.disabled = true;
          const r = await api('DELETE', `/mcp-connections/${c.id}`, { noEnv: true });
          if (!r.ok) {
            button.disabled = false;
            return notice('error', describe(r));
          }
          notice('ok', `«${nombre}» quedó desconectado; los demás agentes siguen conectados.`);
          return conexiones();
        },
      },
      'Desconectar',
    );
    return button;
  };

  async function conexiones() {
    const res = await api('GET', '/mcp-connections', { noEnv: true });
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.data;
    fill(
      conexionesBody,
      data.map((c) =>
        h(
          'tr',
          { 'data-conexion': c.id, 'data-estado': c.revoked_at ? 'revocada' : 'activa' },
          h('td', {}, c.client_name || c.client_id),
          h('td', {}, c.user_email),
          h('td', {}, `${c.company_razon_social} (${c.company_rut})`),
          h('td', {}, ambiente(c.sii_env)),
          h('td', {}, /** @type {string[]} */ (c.scopes).map(permiso).join(', ')),
          h('td', {}, fecha(c.created_at)),
          h('td', {}, fecha(c.last_used_at)),
          h('td', {}, c.revoked_at ? `Desconectada el ${fecha(c.revoked_at)}` : desconectar(c)),
        ),
      ),
      'No hay agentes conectados.',
    );
  }

  /** @type {string | null} */
  let cursor = null;
  /** @param {boolean} append the next (older) page below the rows shown */
  async function auditoria(append) {
    const after = append && cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await api('GET', `/mcp-audit-log?limit=50${after}`, { noEnv: true });
    if (res.status === 403) {
      seccion.hidden = true;
      return;
    }
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.data;
    const rows = data.map((a) =>
      h(
        'tr',
        { 'data-llamada': a.id },
        h('td', {}, fecha(a.created_at)),
        h('td', {}, a.client_name || '—'),
        h('td', {}, a.user_email),
        h('td', {}, herramienta(a.tool)),
        h('td', {}, `${RESULTADO[a.outcome] || a.outcome}${a.error_code ? ` (${a.error_code})` : ''}`),
      ),
    );
    if (append) auditoriaBody.append(...rows);
    else fill(auditoriaBody, rows, 'Los agentes aún no han usado herramientas.');
    cursor = res.body.next_cursor ?? null;
    mas.hidden = !cursor;
  }

  mas.addEventListener('click', () => auditoria(true));
  return Promise.all([conexiones(), auditoria(false)]).then(() => {
    document.body.dataset.agentesReady = 'true';
  });
}
