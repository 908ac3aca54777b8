// @ts-check
// /documentos: the documents issued, filtered as GET /dtes filters them, one keyset page at a time.
import { api } from '../lib/api.js';
import { clearNotice, el, fill, h, notice, show } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { estadoCategoria, estadoTexto } from '../lib/estados.js';
import { clp, dia, diaApi, tipoDte } from '../lib/format.js';

/** @type {import('./index.js').PageRun} */
export default function documentos() {
  const form = el('#form-filtros', HTMLFormElement);
  const tbody = el('#tabla-documentos tbody', HTMLTableSectionElement);
  const more = el('#btn-siguiente', HTMLButtonElement);
  // filters (and the page size) may come in the address: /dashboard/documentos?sii_status=RCH&limit=50
  const inicial = new URLSearchParams(location.search);
  for (const [k, v] of inicial) {
    const field = form.elements.namedItem(k);
    if (field instanceof HTMLInputElement || field instanceof HTMLSelectElement)
      field.value = k.startsWith('fecha_') ? dia(v) : v;
  }
  const limit = /^[0-9]{1,3}$/.test(inicial.get('limit') ?? '') ? String(inicial.get('limit')) : '';
  /** @type {string | null} */
  let cursor = null;
  /** @param {boolean} append the next page after the rows shown (only while there is one) */
  async function load(append) {
    if (append && !cursor) return;
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) {
      const value = String(v).trim();
      if (!value) continue;
      // dates are typed dd-mm-aaaa; the api takes YYYY-MM-DD
      if (k.startsWith('fecha_')) {
        const ymd = diaApi(value);
        if (!ymd) return notice('error', 'Revise las fechas: use dd-mm-aaaa.');
        q.set(k, ymd);
      } else q.set(k, value);
    }
    if (limit) q.set('limit', limit);
    if (append && cursor) q.set('cursor', cursor);
    const res = await api('GET', `/dtes?${q}`);
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.data;
    const rows = data.map((d) =>
      h(
        'tr',
        { 'data-id': d.id },
        h('td', {}, tipoDte(d.tipo_dte)),
        h('td', { class: 'num' }, h('a', { href: `/dashboard/documentos/${d.id}` }, `N° ${d.folio}`)),
        h(
          'td',
          {},
          d.razon_social_receptor || 'Sin razón social',
          h('br'),
          h('small', {}, d.rut_receptor ? `RUT ${d.rut_receptor}` : 'Sin RUT'),
        ),
        h('td', {}, dia(d.fecha_emision)),
        h('td', { class: 'num' }, clp(d.monto_total)),
        h(
          'td',
          {},
          h('span', { class: `estado ${estadoCategoria(d.sii_status)}` }, estadoTexto(d.sii_status)),
        ),
      ),
    );
    if (append) tbody.append(...rows);
    else fill(tbody, rows, 'No hay documentos con esos filtros.');
    cursor = res.body.next_cursor || null;
    show(more, cursor !== null);
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearNotice();
    load(false);
  });
  more.addEventListener('click', () => load(true));
  return load(false);
}
