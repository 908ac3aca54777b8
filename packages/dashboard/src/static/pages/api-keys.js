// @ts-check
// /api-keys: the organization's API keys (prefix only), create (shown once), rotate, revoke.
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { ambiente, fecha } from '../lib/format.js';
import { onSubmit, text } from '../lib/forms.js';
import { permisosApiKey, permiso } from '../lib/permisos.js';

/** @type {import('./index.js').PageRun} */
export default function apiKeys() {
  el('#k-permisos', HTMLFieldSetElement).append(
    ...permisosApiKey().map(({ scope, checked }) =>
      h(
        'label',
        {},
        h('input', { type: 'checkbox', name: 'scopes', value: scope, checked }),
        ` ${permiso(scope)} (${scope})`,
      ),
    ),
  );
  /**
   * @param {string} label
   * @param {{ key: string }} b
   */
  const shown = (label, b) => {
    el('#key-nueva', HTMLElement).replaceChildren(
      h('p', {}, `${label} Cópiela ahora: no se volverá a mostrar.`),
      h('code', { class: 'secreto', id: 'key-valor' }, b.key),
    );
  };
  async function load() {
    const res = await api('GET', '/api-keys', { noEnv: true });
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.data;
    fill(
      el('#tabla-keys tbody', HTMLTableSectionElement),
      data.map((k) =>
        h(
          'tr',
          {},
          h('td', {}, k.nombre),
          h('td', {}, h('code', {}, k.prefix + '…')),
          h('td', {}, ambiente(k.environment)),
          h('td', {}, /** @type {string[]} */ (k.scopes).map(permiso).join(', ')),
          h('td', {}, k.last_used_at ? fecha(k.last_used_at) : 'Nunca'),
          h('td', {}, k.revoked_at ? `Revocada el ${fecha(k.revoked_at)}` : 'Activa'),
          h(
            'td',
            { class: 'actions' },
            k.revoked_at
              ? null
              : [
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secundario',
                      onclick: async () => {
                        const r = await api('POST', `/api-keys/${k.id}/rotate`, { noEnv: true });
                        if (!r.ok) return notice('error', describe(r));
                        shown('Clave rotada; la anterior quedó revocada.', r.body);
                        load();
                      },
                    },
                    'Rotar',
                  ),
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'peligro',
                      onclick: async () => {
                        if (
                          !confirm(
                            `¿Revocar la clave «${k.nombre}»? Los sistemas que la usan dejarán de funcionar.`,
                          )
                        )
                          return;
                        const r = await api('POST', `/api-keys/${k.id}/revoke`, { noEnv: true });
                        if (!r.ok) return notice('error', describe(r));
                        notice('ok', 'Clave revocada.');
                        load();
                      },
                    },
                    'Revocar',
                  ),
                ],
          ),
        ),
      ),
      'No hay API keys.',
    );
  }
  onSubmit('form-key', async (_f, d) => {
    const res = await api('POST', '/api-keys', {
      noEnv: true,
      json: { nombre: text(d, 'nombre'), environment: text(d, 'environment'), scopes: d.getAll('scopes') },
    });
    if (!res.ok) return notice('error', describe(res));
    shown('Clave creada.', res.body);
    load();
  });
  return load();
}
