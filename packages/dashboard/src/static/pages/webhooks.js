// @ts-check
// /webhooks: the spec takes only an API key (Bearer) on /webhooks, never the session. The page
// says so, and an owner creates a webhook:read/webhook:write key in one step (kept in this page's
// memory only), or pastes one.
import { api, env } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { ambiente } from '../lib/format.js';
import { onSubmit, text } from '../lib/forms.js';

/** @type {Record<string, string>} */
export const EVENTOS = {
  'dte.emitted': 'Documento emitido',
  'dte.status_changed': 'Cambio de estado en el SII',
  'dte.accepted': 'Aceptado por el SII',
  'dte.rejected': 'Rechazado por el SII',
};

/** @type {Record<string, string>} */
const MOTIVOS = { too_many_failures: 'demasiadas entregas fallidas' };

/** @type {import('./index.js').PageRun} */
export default function webhooks() {
  let key = '';
  const estadoClave = el('#webhook-clave-estado', HTMLElement);
  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [json]
   * @param {Record<string, string>} [headers]
   */
  const call = (method, path, json, headers) => api(method, path, { bearer: key, json, headers });
  /** @param {string} k @param {string} how */
  function useKey(k, how) {
    key = k;
    estadoClave.textContent = `${how} Ambiente: ${ambiente(k.startsWith('sk_prod_') ? 'prod' : 'cert')}. Se usa solo mientras esta página esté abierta.`;
    load();
  }
  async function load() {
    const res = await call('GET', '/webhooks');
    if (!res.ok) return notice('error', describe(res));
    /** @type {any[]} */
    const data = res.body.webhooks;
    fill(
      el('#tabla-webhooks tbody', HTMLTableSectionElement),
      data.map((w) =>
        h(
          'tr',
          {},
          h('td', {}, w.url),
          h('td', {}, /** @type {string[]} */ (w.events).map((e) => EVENTOS[e] || e).join(', ')),
          h(
            'td',
            {},
            w.active ? 'Sí' : `No (${MOTIVOS[w.disabled_reason] || w.disabled_reason || 'desactivado'})`,
          ),
          h(
            'td',
            { class: 'actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'secundario',
                onclick: async () => {
                  const r = await call('POST', `/webhooks/${w.id}/test`);
                  notice(r.ok ? 'ok' : 'error', r.ok ? 'Evento de prueba encolado.' : describe(r));
                },
              },
              'Probar',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'peligro',
                onclick: async () => {
                  if (!confirm(`¿Eliminar la suscripción a ${w.url}?`)) return;
                  const r = await call('DELETE', `/webhooks/${w.id}`);
                  if (!r.ok) return notice('error', describe(r));
                  notice('ok', 'Suscripción eliminada.');
                  load();
                },
              },
              'Eliminar',
            ),
          ),
        ),
      ),
      'Sin suscripciones.',
    );
  }
  el('#btn-webhook-crear-clave', HTMLButtonElement).addEventListener('click', async () => {
    const res = await api('POST', '/api-keys', {
      noEnv: true,
      json: { nombre: 'Webhooks (panel)', environment: env(), scopes: ['webhook:read', 'webhook:write'] },
    });
    if (!res.ok) return notice('error', describe(res));
    useKey(
      res.body.key,
      `Se creó la API key «Webhooks (panel)» (${res.body.prefix || 'sk_'}…); puede revocarla en API keys.`,
    );
  });
  onSubmit('form-webhook-key', (_f, d) => useKey(text(d, 'key'), 'Se usa la API key ingresada.'));
  onSubmit('form-webhook', async (_f, d) => {
    if (!key) return notice('error', 'Primero cree o ingrese una API key (paso 1).');
    const res = await call(
      'POST',
      '/webhooks',
      { url: text(d, 'url'), events: d.getAll('events') },
      { 'Idempotency-Key': crypto.randomUUID() },
    );
    if (!res.ok) return notice('error', describe(res));
    el('#webhook-secreto', HTMLElement).replaceChildren(
      h('p', {}, 'Secreto de firma (se muestra solo esta vez):'),
      h('code', { class: 'secreto' }, res.body.secret),
    );
    notice('ok', 'Suscripción creada.');
    load();
  });
}
