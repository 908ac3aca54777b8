// @ts-check
// /folios: the folio inventory (CAF), low-folio alerts, folio requests to the SII.
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { nombreTipo, tipoDte } from '../lib/format.js';
import { onSubmit } from '../lib/forms.js';

/** @type {import('./index.js').PageRun} */
export default function folios() {
  async function load() {
    const res = await api('GET', '/caf');
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const summary = res.body.summary;
    /** @type {any[]} */
    const cafs = res.body.data;
    const low = summary.filter((s) => s.alerts.includes('low_folios'));
    el('#alertas-folios', HTMLElement).replaceChildren(
      ...low.map((s) =>
        h(
          'p',
          { class: 'alerta' },
          `Quedan pocos folios de ${nombreTipo(s.tipo_dte)} (tipo ${s.tipo_dte}): ${s.remaining}, umbral ${s.low_folios_threshold}. Solicite más.`,
        ),
      ),
    );
    fill(
      el('#tabla-resumen tbody', HTMLTableSectionElement),
      summary.map((s) =>
        h(
          'tr',
          {},
          h('td', {}, s.rut_emisor),
          h('td', {}, tipoDte(s.tipo_dte)),
          h('td', { class: 'num' }, String(s.remaining)),
          h('td', { class: 'num' }, s.next_folio === null ? '—' : String(s.next_folio)),
          h('td', {}, s.alerts.includes('low_folios') ? 'Pocos folios' : '—'),
        ),
      ),
      'Sin folios: solicítelos al SII.',
    );
    fill(
      el('#tabla-cafs tbody', HTMLTableSectionElement),
      cafs.map((c) =>
        h(
          'tr',
          {},
          h('td', {}, tipoDte(c.tipo_dte)),
          h('td', { class: 'num' }, String(c.desde)),
          h('td', { class: 'num' }, String(c.hasta)),
          h('td', {}, c.expired ? 'Vencido' : c.exhausted ? 'Agotado' : `${c.remaining} disponibles`),
        ),
      ),
      'Sin rangos.',
    );
  }
  onSubmit('form-folios', async (_f, d) => {
    const res = await api('POST', '/caf/request', {
      json: { tipo_dte: Number(d.get('tipo_dte')), cantidad: Number(d.get('cantidad')) },
    });
    if (!res.ok) return notice('error', describe(res));
    notice('ok', `Folios autorizados por el SII: del ${res.body.desde} al ${res.body.hasta}.`);
    load();
  });
  return load();
}
