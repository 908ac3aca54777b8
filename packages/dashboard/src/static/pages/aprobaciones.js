// @ts-check
// /aprobaciones: irreversible actions MCP agents asked for, approved or rejected by a person.
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { estadoTexto } from '../lib/estados.js';
import { ambiente, fecha, nombreTipo } from '../lib/format.js';
import { herramienta } from '../lib/herramientas.js';

/** @type {Record<string, string>} */
const ESTADOS_ACCION = {
  pending: 'Pendiente',
  approved: 'Aprobada y ejecutada',
  rejected: 'Rechazada',
  failed: 'Aprobada; el SII o el servicio la rechazó',
};

/**
 * What came out of an approved action, in one line.
 * @param {any} a
 */
function resultado(a) {
  if (a.status === 'pending') return null;
  if (a.status === 'rejected') return 'No se hizo nada.';
  const r = a.result || {};
  if (a.status === 'failed') return r.message || 'Error';
  if (r.sii_estado) {
    const ev = r.reclamo || r.acuse;
    return `Registrada en el SII${ev ? ` (${ev})` : ''}; estado en el registro: ${r.sii_estado}.`;
  }
  if (r.tipo_dte)
    return `${nombreTipo(r.tipo_dte)} N° ${r.folio ?? '—'} (${r.sii_status ? estadoTexto(r.sii_status) : 'en proceso'}).`;
  return 'Ejecutada.';
}

/** @type {import('./index.js').PageRun} */
export default function aprobaciones() {
  const tbody = el('#tabla-aprobaciones tbody', HTMLTableSectionElement);
  /**
   * @param {any} a
   * @param {'approve' | 'reject'} decision
   * @param {HTMLElement} cell
   */
  const decide = async (a, decision, cell) => {
    cell.querySelectorAll('button').forEach((b) => (b.disabled = true));
    const res = await api('POST', `/pending-actions/${a.id}/${decision}`, { noEnv: true });
    if (!res.ok) {
      cell.querySelectorAll('button').forEach((b) => (b.disabled = false));
      return notice('error', describe(res));
    }
    const done = res.body.pending_action;
    notice(done.status === 'failed' ? 'error' : 'ok', `${ESTADOS_ACCION[done.status]}: ${done.summary}`);
    return load();
  };
  /** @param {any} a */
  const row = (a) => {
    const decision = h('td', { class: 'decision' });
    if (a.status === 'pending') {
      decision.append(
        h(
          'span',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              'data-approve': a.id,
              'aria-label': `Aprobar: ${a.summary}`,
              onclick: () => decide(a, 'approve', decision),
            },
            'Aprobar',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'peligro',
              'data-reject': a.id,
              'aria-label': `Rechazar: ${a.summary}`,
              onclick: () => decide(a, 'reject', decision),
            },
            'Rechazar',
          ),
        ),
      );
    } else decision.append(`${resultado(a)}${a.decided_at ? ` (${fecha(a.decided_at)})` : ''}`);
    return h(
      'tr',
      { 'data-accion': a.id, 'data-estado': a.status },
      h('td', {}, fecha(a.created_at)),
      h('td', {}, a.summary),
      h('td', {}, herramienta(a.tool)),
      h('td', {}, ambiente(a.sii_env)),
      h('td', {}, h('span', { class: `estado ${a.status}` }, ESTADOS_ACCION[a.status] || a.status)),
      decision,
    );
  };
  async function load() {
    const res = await api('GET', '/pending-actions', { noEnv: true });
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.pending_actions;
    fill(tbody, data.map(row), 'No hay acciones pedidas por agentes.');
  }
  return load();
}
