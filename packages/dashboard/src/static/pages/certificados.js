// @ts-check
// /certificados: the signing certificates, upload (.p12), activate, delete.
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { fecha } from '../lib/format.js';
import { onSubmit } from '../lib/forms.js';

/** @type {import('./index.js').PageRun} */
export default function certificados() {
  const tbody = el('#tabla-certificados tbody', HTMLTableSectionElement);
  async function load() {
    const res = await api('GET', '/certificates');
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.data;
    fill(
      tbody,
      data.map((c) =>
        h(
          'tr',
          {},
          h('td', {}, c.label),
          h('td', {}, c.rut),
          h('td', {}, fecha(c.not_after)),
          h('td', {}, c.is_default ? 'Sí' : 'No'),
          h(
            'td',
            { class: 'actions' },
            c.is_default
              ? null
              : h(
                  'button',
                  {
                    type: 'button',
                    class: 'secundario',
                    onclick: () => act('POST', `/certificates/${c.id}/activate`, 'Certificado activado.'),
                  },
                  'Activar',
                ),
            h(
              'button',
              {
                type: 'button',
                class: 'peligro',
                onclick: () =>
                  confirm(`¿Eliminar el certificado «${c.label}»?`) &&
                  act('DELETE', `/certificates/${c.id}`, 'Certificado eliminado.'),
              },
              'Eliminar',
            ),
          ),
        ),
      ),
      'No hay certificados cargados.',
    );
  }
  /**
   * @param {string} method
   * @param {string} path
   * @param {string} ok
   */
  async function act(method, path, ok) {
    const res = await api(method, path);
    if (!res.ok) return notice('error', describe(res));
    notice('ok', ok);
    load();
  }
  const archivo = el('#c-archivo', HTMLInputElement);
  const nombreArchivo = el('#c-archivo-nombre', HTMLElement);
  const mostrarArchivo = () =>
    (nombreArchivo.textContent =
      archivo.files && archivo.files[0] ? archivo.files[0].name : 'Ningún archivo elegido');
  archivo.addEventListener('change', mostrarArchivo);
  onSubmit('form-certificado', async (form, d) => {
    const file = d.get('file');
    if (!(file instanceof File) || !file.size) return notice('error', 'Elija el archivo .p12.');
    const res = await api('POST', '/certificates', { form: d });
    if (!res.ok) return notice('error', describe(res));
    form.reset();
    mostrarArchivo();
    notice('ok', `Certificado «${res.body.label}» cargado (RUT ${res.body.rut}).`);
    load();
  });
  return load();
}
