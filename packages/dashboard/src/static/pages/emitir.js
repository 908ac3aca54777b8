// @ts-check
// /emitir: an invoice (33) with a live preview of its totals; receivers issued to before are offered.
import { api } from '../lib/api.js';
import { el, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { clp, hoy } from '../lib/format.js';
import { onSubmit, rutApi, text } from '../lib/forms.js';

/**
 * @param {HTMLElement} root
 * @param {string} name
 */
const input = (root, name) => el(`[name=${name}]`, HTMLInputElement, root);

/** Fills /emitir (a PageRun). @returns {Promise<void>} */
export default async function emitir() {
  const tbody = el('#tabla-items tbody', HTMLTableSectionElement);
  const rows = () => [...tbody.querySelectorAll('tr')];
  function recompute() {
    let neto = 0;
    for (const tr of rows()) {
      const c = Number(input(tr, 'cantidad').value) || 0;
      const p = Number(input(tr, 'precio').value) || 0;
      const monto = Math.round(c * p);
      tr.dataset.monto = String(monto);
      el('.monto', HTMLElement, tr).textContent = clp(monto);
      neto += monto;
    }
    const iva = Math.round(neto * 0.19);
    el('#v-neto', HTMLElement).textContent = clp(neto);
    el('#v-iva', HTMLElement).textContent = clp(iva);
    el('#v-total', HTMLElement).textContent = clp(neto + iva);
  }
  let seq = 0;
  function addItem() {
    seq += 1;
    const tr = h(
      'tr',
      {},
      h(
        'td',
        {},
        h('label', { class: 'sr', for: `i-nombre-${seq}` }, 'Nombre'),
        h('input', { id: `i-nombre-${seq}`, name: 'nombre', required: true, maxlength: 80 }),
        h('span', { class: 'field-error', id: `i-nombre-${seq}-error` }),
      ),
      h(
        'td',
        {},
        h('label', { class: 'sr', for: `i-cant-${seq}` }, 'Cantidad'),
        h('input', {
          id: `i-cant-${seq}`,
          name: 'cantidad',
          type: 'number',
          min: '1',
          step: 'any',
          value: '1',
          required: true,
        }),
      ),
      h(
        'td',
        {},
        h('label', { class: 'sr', for: `i-precio-${seq}` }, 'Precio unitario'),
        h('input', {
          id: `i-precio-${seq}`,
          name: 'precio',
          type: 'number',
          min: '0',
          step: '1',
          required: true,
        }),
      ),
      h('td', { class: 'num monto' }, '$0'),
      h(
        'td',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'peligro',
            onclick: () => {
              tr.remove();
              recompute();
            },
          },
          'Quitar',
        ),
      ),
    );
    tbody.append(tr);
    recompute();
  }
  tbody.addEventListener('input', recompute);
  el('#btn-item', HTMLButtonElement).addEventListener('click', addItem);
  addItem();
  const me = await api('GET', '/organizations/me', { noEnv: true });
  const contrapartes = await api('GET', '/contrapartes');
  /** @type {Map<string, Record<string, string>>} */
  const known = new Map();
  if (contrapartes.ok) {
    for (const c of contrapartes.body.data) {
      known.set(c.rut, c);
      el('#lista-contrapartes', HTMLDataListElement).append(h('option', { value: c.rut }, c.razon_social));
    }
  }
  const rut = el('#e-rut', HTMLInputElement);
  rut.addEventListener('change', () => {
    const c = known.get(rutApi(rut.value));
    if (!c) return;
    for (const [k, sel] of [
      ['razon_social', '#e-razon'],
      ['giro', '#e-giro'],
      ['direccion', '#e-direccion'],
      ['comuna', '#e-comuna'],
    ]) {
      const field = el(sel ?? '', HTMLInputElement);
      const v = c[k ?? ''];
      if (v && !field.value) field.value = v;
    }
  });
  onSubmit('form-emitir', async (_f, d) => {
    if (!me.ok || !me.body.empresas.length) return notice('error', 'La organización no tiene empresa.');
    const items = rows().map((tr) => ({
      nombre: input(tr, 'nombre').value.trim(),
      cantidad: Number(input(tr, 'cantidad').value),
      precio_unitario: Number(input(tr, 'precio').value),
      exento: false,
      monto_item: Number(tr.dataset.monto),
    }));
    if (!items.length) return notice('error', 'Agregue al menos un ítem.');
    const json = {
      tipo_dte: 33,
      rut_emisor: me.body.empresas[0].rut,
      fecha_emision: hoy(),
      forma_pago: 1,
      receptor: {
        rut: rutApi(d.get('rut')),
        razon_social: text(d, 'razon_social'),
        giro: text(d, 'giro'),
        direccion: text(d, 'direccion'),
        comuna: text(d, 'comuna'),
      },
      items,
    };
    const res = await api('POST', '/dtes', { json, headers: { 'Idempotency-Key': crypto.randomUUID() } });
    if (!res.ok) return notice('error', describe(res));
    location.assign(`/dashboard/documentos/${res.body.id}?emitida=1`);
  });
}
