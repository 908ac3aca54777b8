// @ts-check
// /organizacion: the user's organizations, register a company, request access, SII situation.
import { api } from '../lib/api.js';
import { el, fill, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { diaApi, fecha, rol } from '../lib/format.js';
import { onSubmit, rutApi, text } from '../lib/forms.js';

/** @type {Record<string, string>} */
const SITUACION = {
  activo: 'activa, con inicio de actividades',
  rut_inexistente: 'el RUT no existe en el SII',
  sin_inicio_actividades: 'sin inicio de actividades',
};

/** @type {import('./index.js').PageRun} */
export default async function organizacion(me) {
  if (!me) return;
  fill(
    el('#tabla-organizaciones tbody', HTMLTableSectionElement),
    me.organizaciones.map((o) =>
      h(
        'tr',
        {},
        h('td', {}, o.name),
        h('td', {}, o.rut || '—'),
        h('td', {}, rol(o.role)),
        h(
          'td',
          {},
          o.organization_id === me.organizacion_actual
            ? 'Actual'
            : h(
                'button',
                {
                  type: 'button',
                  class: 'secundario',
                  onclick: async () => {
                    const res = await api('PUT', '/auth/organizacion', {
                      noEnv: true,
                      json: { organization_id: o.organization_id },
                    });
                    if (!res.ok) return notice('error', describe(res));
                    location.assign('/dashboard/documentos');
                  },
                },
                'Usar esta',
              ),
        ),
      ),
    ),
    'Aún no pertenece a ninguna organización.',
  );
  if (me.organizacion_actual) {
    const o = await api('GET', '/organizations/me', { noEnv: true });
    if (o.ok) {
      const s = o.body.situacion_estado;
      el('#situacion', HTMLElement).textContent =
        `RUT ${o.body.rut || 'sin RUT'} · situación en el SII: ${s ? SITUACION[s] || s : 'sin revisar'}` +
        ` (revisada el ${fecha(o.body.situacion_checked_at)}) · producción: ${o.body.prod_enabled ? 'habilitada' : 'no habilitada'}`;
    }
  }
  el('#btn-revalidar', HTMLButtonElement).addEventListener('click', async () => {
    const res = await api('POST', '/organizations/me/revalidar-situacion', { noEnv: true });
    if (!res.ok) return notice('error', describe(res));
    notice('ok', `Situación en el SII: ${SITUACION[res.body.estado] || res.body.estado}.`);
  });
  onSubmit('form-organizacion', async (_f, d) => {
    /** @type {Record<string, string | number | { p12_base64: string, password: string }>} */
    const json = { rut: rutApi(d.get('rut')) };
    for (const k of ['nombre', 'giro', 'direccion', 'comuna']) if (text(d, k)) json[k] = text(d, k);
    const fechaResolucion = diaApi(text(d, 'resolucion_cert_fecha'));
    if (fechaResolucion) json.resolucion_cert_fecha = fechaResolucion;
    for (const k of ['actividad_economica', 'resolucion_cert_numero'])
      if (text(d, k)) json[k] = Number(text(d, k));
    // proof of control: the .p12 of a signer the SII authorizes for the RUT (base64), and its password
    const p12 = d.get('certificado');
    if (p12 instanceof File && p12.size) {
      const bytes = new Uint8Array(await p12.arrayBuffer());
      let bin = '';
      for (const b of bytes) bin += String.fromCharCode(b);
      json.certificado = { p12_base64: btoa(bin), password: text(d, 'certificado_password') };
    }
    const res = await api('POST', '/organizations', { noEnv: true, json });
    if (!res.ok) return notice('error', describe(res));
    location.assign('/dashboard/documentos');
  });
  onSubmit('form-acceso', async (_f, d) => {
    const res = await api('POST', '/organizations/solicitar-acceso', {
      noEnv: true,
      json: { rut: rutApi(d.get('rut')) },
    });
    if (!res.ok) return notice('error', describe(res));
    notice('ok', `Solicitud enviada a ${res.body.organizacion}; vence el ${fecha(res.body.expires_at)}.`);
  });
}
