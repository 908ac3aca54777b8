/**
 * RCV reads (registro de compras y ventas) in the format of the SII's own services, the JSON
 * facade its web application calls (the client, packages/sii-client/src/rcv.ts, and
 * docs/sii-exchange.md "RCV" describe it and its sources):
 *
 *   POST /{env}/consdcvinternetui/services/data/facadeService/{getResumen|getDetalleCompra|getDetalleVenta}
 *   Cookie: TOKEN=…   {"metaData": {"namespace": …, "conversationId": …}, "data": {"rutEmisor",
 *   "dvEmisor", "ptributario": "YYYYMM", "operacion": "COMPRA"|"VENTA", "estadoContab", "codTipoDoc"?}}
 *   → 200 {"data": [rows], "metaData": {…}, "respEstado": {"codRespuesta": 0, …}}
 *
 * getResumen rows: rsmnTipoDocInteger, rsmnTotDoc, rsmnMntExe, rsmnMntNeto, rsmnMntIVA,
 * rsmnMntTotal per document type with documents in that state; getDetalle* rows: the det*
 * fields (dates DD/MM/YYYY, date-times DD/MM/YYYY HH:MM:SS in Chile's time). Fields the
 * simulator does not model (non-recoverable VAT, fixed assets, other taxes) are 0, purchase type
 * 1 (del giro). Purchases carry `cesion`, the simulator's own extension (the SII's rows do not
 * say): a transfer recorded through the admin API, or null.
 *
 * Sales are the documents the company issued and the simulator accepted; purchases are the
 * accepted documents it received plus purchases seeded with POST /admin/{env}/purchases.
 * Period = month of the issue date. The state (estadoContab) of a purchase (purchase-register.ts):
 * RECLAMADO after a claim, REGISTRO after ACD/ERM or once the 8-day window has closed, PENDIENTE
 * before; sales are REGISTRO. detEventoReceptor is the last register event on the document.
 * 401 {error: 'token_invalido'} without a valid token; 403 {error: 'sin_permiso'} when the user
 * is not authorized for the company; bad parameters answer respEstado.codRespuesta 2.
 */
import type { Context } from 'koa';
import { chileDateTime } from '../chile-time';
import { applyFault, cookieToken, jsonError, readBody } from '../http';
import { isFinal } from '../progress';
import { purchaseEstado, seededAsDocument } from '../purchase-register';
import { normalizeRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import type { DocumentRecord, SiiEnv } from '../types';

export const RCV_FACADE_PATH = '/consdcvinternetui/services/data/facadeService';
export const RCV_OPERATIONS = ['getResumen', 'getDetalleCompra', 'getDetalleVenta'] as const;

const EVENT_NAMES: Record<string, string> = {
  ACD: 'Acepta Contenido del Documento',
  ERM: 'Otorga Recibo de Mercaderías o Servicios',
  RCD: 'Reclamo al Contenido del Documento',
  RFP: 'Reclamo por Falta Parcial de Mercaderías',
  RFT: 'Reclamo por Falta Total de Mercaderías',
};

interface Listed {
  d: DocumentRecord;
  estado: string;
  other: string;
  razonSocial: string | null;
  cesion?: unknown;
}

export async function rcv(sim: Sim, env: SiiEnv, ctx: Context, op: string): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'rcv')) return;
  const now = sim.state.now();
  const e = sim.state.env[env];
  const token = checkToken(e, cookieToken(ctx), now);
  if (!token.ok) return jsonError(ctx, 401, 'token_invalido', `token ${token.reason}`);
  const answer = (data: unknown[] | null, codRespuesta = 0, msgeRespuesta: string | null = null) => {
    ctx.type = 'application/json';
    ctx.body = {
      data,
      metaData: {
        namespace: `cl.sii.sdi.lob.diii.consdcv.data.api.interfaces.FacadeService/${op}`,
        page: null,
      },
      respEstado: { codRespuesta, msgeRespuesta, codError: codRespuesta ? String(codRespuesta) : null },
    };
  };
  let req: { data?: Record<string, unknown> };
  try {
    req = JSON.parse((await readBody(ctx)).toString('utf8')) as { data?: Record<string, unknown> };
  } catch {
    return answer(null, 2, 'Error de parámetros: el cuerpo no es JSON');
  }
  const p = req?.data ?? {};
  const rut = normalizeRut(`${String(p.rutEmisor ?? '')}-${String(p.dvEmisor ?? '')}`);
  const ptrib = String(p.ptributario ?? '');
  const operacion = p.operacion;
  const estadoContab = String(p.estadoContab ?? 'REGISTRO');
  if (!rut || !/^\d{4}(0[1-9]|1[0-2])$/.test(ptrib) || (operacion !== 'COMPRA' && operacion !== 'VENTA'))
    return answer(null, 2, 'Error de parámetros');
  if (op === 'getDetalleCompra' && operacion !== 'COMPRA') return answer(null, 2, 'Error de parámetros');
  if (op === 'getDetalleVenta' && operacion !== 'VENTA') return answer(null, 2, 'Error de parámetros');
  if (!authorize(sim, e, token.token.rut, rut))
    return jsonError(ctx, 403, 'sin_permiso', `${token.token.rut} is not authorized for ${rut}`);
  const periodo = `${ptrib.slice(0, 4)}-${ptrib.slice(4)}`;

  const accepted: DocumentRecord[] = [];
  for (const d of e.documents.values()) {
    if (d.result === 'RECHAZADO' || !d.fchEmis.startsWith(periodo)) continue;
    const u = e.uploads.get(d.trackId);
    if (u && isFinal(u, now, sim.options.timings)) accepted.push(d);
  }
  let listed: Listed[];
  if (operacion === 'VENTA')
    listed = accepted
      .filter((d) => d.rutEmisor === rut)
      .map((d) => ({ d, estado: 'REGISTRO', other: d.rutReceptor, razonSocial: null }));
  else
    listed = [
      ...accepted
        .filter((d) => d.rutReceptor === rut)
        .map((d) => ({
          d,
          estado: purchaseEstado(d, now),
          other: d.rutEmisor,
          razonSocial: null,
          cesion: null,
        })),
      ...e.purchases
        .filter((x) => x.rutReceptor === rut && x.fchEmis.startsWith(periodo))
        .map((x) => {
          const d = seededAsDocument(env, x);
          return {
            d,
            estado: purchaseEstado(d, now),
            other: x.rutEmisor,
            razonSocial: x.razonSocialEmisor ?? null,
            cesion: x.cesion ?? null,
          };
        }),
    ];
  listed = listed.filter((l) => l.estado === estadoContab);

  if (op === 'getResumen') {
    const byTipo = new Map<number, Listed[]>();
    for (const l of listed) byTipo.set(l.d.tipoDte, [...(byTipo.get(l.d.tipoDte) ?? []), l]);
    const sum = (ls: Listed[], f: (d: DocumentRecord) => number | undefined) =>
      ls.reduce((a, l) => a + (f(l.d) ?? 0), 0);
    return answer(
      [...byTipo.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([tipo, ls]) => ({
          rsmnTipoDocInteger: tipo,
          rsmnTotDoc: ls.length,
          rsmnMntExe: sum(ls, (d) => d.mntExe),
          rsmnMntNeto: sum(ls, (d) => d.mntNeto),
          rsmnMntIVA: sum(ls, (d) => d.iva),
          rsmnMntIVANoRec: 0,
          rsmnMntTotal: sum(ls, (d) => d.mntTotal),
          rsmnEstadoContab: estadoContab,
          rsmnLink: true,
        })),
    );
  }
  const tipo = Number(p.codTipoDoc);
  const rows = listed
    .filter((l) => l.d.tipoDte === tipo)
    .sort((a, b) => a.d.folio - b.d.folio)
    .map((l) => detRow(l, operacion));
  return answer(rows);
}

/** DD/MM/YYYY of an ISO date */
function dmy(iso: string): string {
  return `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
}

/** DD/MM/YYYY HH:MM:SS in Chile */
function dmyTime(ms: number): string {
  const t = chileDateTime(ms);
  return `${dmy(t.slice(0, 10))} ${t.slice(11)}`;
}

function detRow(l: Listed, operacion: 'COMPRA' | 'VENTA') {
  const { d } = l;
  const [body, dv] = l.other.split('-');
  const last = d.events[d.events.length - 1];
  const acuse = d.events.find((ev) => ev.codEvento === 'ACD' || ev.codEvento === 'ERM');
  const reclamo = d.events.find((ev) => ['RCD', 'RFP', 'RFT'].includes(ev.codEvento));
  return {
    dhdrCodigo: 0,
    detTipoDoc: d.tipoDte,
    detRutDoc: Number(body),
    detDvDoc: dv,
    detRznSoc: l.razonSocial,
    detNroDoc: d.folio,
    detFchDoc: dmy(d.fchEmis),
    detFecRecepcion: dmyTime(d.receivedAt),
    detFecAcuse: acuse ? dmyTime(acuse.at) : null,
    detFecReclamado: reclamo ? dmyTime(reclamo.at) : null,
    detMntExe: d.mntExe ?? 0,
    detMntNeto: d.mntNeto ?? 0,
    detMntIVA: d.iva ?? 0,
    detMntIVANoRec: 0,
    detCodIVANoRec: null,
    detIVAUsoComun: 0,
    detMntActFijo: 0,
    detMntIVAActFijo: 0,
    detMntSinCredito: 0,
    totalDtoiMontoImp: 0,
    detTpoImp: 1,
    detTasaImp: null,
    detMntTotal: d.mntTotal,
    detTipoTransaccion: operacion === 'COMPRA' ? 1 : null,
    detEventoReceptor: last?.codEvento ?? null,
    detEventoReceptorLeyenda: last ? (EVENT_NAMES[last.codEvento] ?? last.codEvento) : null,
    ...(operacion === 'COMPRA' ? { cesion: l.cesion ?? null } : {}),
  };
}
