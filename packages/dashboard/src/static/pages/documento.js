// @ts-check
// /documentos/:id: one document, its status in words, the timeline, XML and PDF downloads.
import { API, api, env } from '../lib/api.js';
import { el, h, notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { estadoCategoria, estadoTexto } from '../lib/estados.js';
import { ambiente, clp, dia, fecha, nombreTipo } from '../lib/format.js';

/** @type {Record<string, string>} */
const ORIGEN = {
  api: 'recibido por el servicio',
  signer: 'firmado con el certificado',
  uploader: 'enviado al SII',
  'sii-uploader': 'enviado al SII',
  poller: 'consultado en el SII',
  'sii-poller': 'consultado en el SII',
  sii: 'respuesta del SII',
};

/** @type {import('./index.js').PageRun} */
export default function documento() {
  const id = location.pathname.split('/').pop() || '';
  el('#doc-xml', HTMLAnchorElement).href = `${API}/dtes/${id}/xml?sii_env=${env()}`;
  el('#doc-pdf', HTMLAnchorElement).href = `${API}/dtes/${id}/pdf?sii_env=${env()}`;
  async function load() {
    const [d, ev] = await Promise.all([api('GET', `/dtes/${id}`), api('GET', `/dtes/${id}/events`)]);
    if (!d.ok) return notice('error', describe(d));
    const doc = d.body;
    const titulo = `${nombreTipo(doc.tipo_dte)} N° ${doc.folio}`;
    el('#doc-titulo', HTMLElement).textContent = titulo;
    document.title = `${titulo} · Panel DTE`;
    const estado = doc.estado || {};
    /** @type {[string, string | Node][]} */
    const pairs = [
      [
        'Estado en el SII',
        h(
          'span',
          {
            class: `estado ${estadoCategoria(doc.sii_status)}`,
            id: 'doc-estado',
            'data-codigo': doc.sii_status,
          },
          estadoTexto(doc.sii_status),
        ),
      ],
      ['Detalle', estado.descripcion || doc.sii_glosa || '—'],
      ['Emisor', `RUT ${doc.rut_emisor}`],
      ['Cliente', `${doc.razon_social_receptor || 'Sin razón social'} · RUT ${doc.rut_receptor || '—'}`],
      ['Fecha de emisión', dia(doc.fecha_emision)],
      ['Neto', clp(doc.monto_neto)],
      ['IVA', clp(doc.iva)],
      ['Total', clp(doc.monto_total)],
      ['N° de envío al SII (track id)', doc.track_id ? String(doc.track_id) : 'Aún no enviado'],
      ['Ambiente', ambiente(doc.sii_env)],
    ];
    el('#doc-datos', HTMLElement).replaceChildren(
      ...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    );
    /** @type {any[]} */
    const events = ev.ok ? ev.body.data : [];
    el('#doc-eventos', HTMLElement).replaceChildren(
      ...(events.length
        ? events.map((e) =>
            h(
              'li',
              {},
              h('strong', {}, estadoTexto(e.sii_status)),
              ` · ${fecha(e.observed_at)}`,
              e.glosa ? ` · ${e.glosa}` : '',
              ORIGEN[e.source] ? ` (${ORIGEN[e.source]})` : '',
            ),
          )
        : [h('li', {}, 'Sin eventos aún.')]),
    );
  }
  el('#btn-actualizar', HTMLButtonElement).addEventListener('click', () => load());
  return load().then(() => {
    // the emission page comes here with ?emitida=1: confirm what happened, in the user's words
    if (new URLSearchParams(location.search).get('emitida') !== '1') return;
    const t = el('#doc-titulo', HTMLElement).textContent;
    notice(
      'ok',
      `${t} emitida. El servicio la firmará y la enviará al SII; su estado se actualiza en esta página.`,
    );
  });
}
