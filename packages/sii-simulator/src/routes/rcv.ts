/**
 * RCV reads (registro de compras y ventas). The SII's own RCV endpoints are undocumented
 * session/JSON calls of its web app, so this is the simulator's own documented shape:
 *
 *   GET /{env}/rcv/{ventas|compras}/{rut}/{YYYY-MM}   Cookie: TOKEN=…
 *   → 200 { rutEmpresa, periodo, operacion, documentos: [ { tipoDte, folio, rutEmisor,
 *           rutReceptor, fchEmis, fechaRecepcion, mntNeto, mntExe, iva, mntTotal, estado } ] }
 *
 * Sales are the documents the company issued and the simulator accepted; purchases are the
 * accepted documents it received plus purchases seeded with POST /admin/{env}/purchases.
 * Period = month of the issue date. estado (purchases, seeded ones too: purchase-register.ts):
 * RECLAMADO after a claim, REGISTRO after ACD/ERM or once the 8-day window has passed, PENDIENTE
 * before; sales are always REGISTRO. Every row also lists `eventos`, the register event codes
 * recorded on it (so the issuer sees what its receiver did).
 * 401 { error: 'token_invalido' } without a valid token; 403 { error: 'sin_permiso' } when the
 * user is not authorized for the company; 422 for a malformed RUT or period.
 */
import type { Context } from 'koa';
import { applyFault, cookieToken, jsonError } from '../http';
import { isFinal } from '../progress';
import { purchaseEstado, seededAsDocument } from '../purchase-register';
import { normalizeRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import type { DocumentRecord, SiiEnv } from '../types';

export async function rcv(
  sim: Sim,
  env: SiiEnv,
  ctx: Context,
  operacion: string,
  rutRaw: string,
  periodo: string,
): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'rcv')) return;
  const now = sim.state.now();
  const e = sim.state.env[env];
  const token = checkToken(e, cookieToken(ctx), now);
  if (!token.ok) return jsonError(ctx, 401, 'token_invalido', `token ${token.reason}`);
  const rut = normalizeRut(rutRaw);
  if (!rut || (operacion !== 'ventas' && operacion !== 'compras') || !/^\d{4}-(0[1-9]|1[0-2])$/.test(periodo))
    return jsonError(ctx, 422, 'parametros_invalidos', 'expected /rcv/{ventas|compras}/{rut-dv}/{YYYY-MM}');
  if (!authorize(sim, e, token.token.rut, rut))
    return jsonError(ctx, 403, 'sin_permiso', `${token.token.rut} is not authorized for ${rut}`);

  const accepted: DocumentRecord[] = [];
  for (const d of e.documents.values()) {
    if (d.result === 'RECHAZADO' || !d.fchEmis.startsWith(periodo)) continue;
    const u = e.uploads.get(d.trackId);
    if (u && isFinal(u, now, sim.options.timings)) accepted.push(d);
  }
  const row = (d: DocumentRecord, estado: string) => ({
    tipoDte: d.tipoDte,
    folio: d.folio,
    rutEmisor: d.rutEmisor,
    rutReceptor: d.rutReceptor,
    fchEmis: d.fchEmis,
    fechaRecepcion: new Date(d.receivedAt).toISOString(),
    mntNeto: d.mntNeto ?? 0,
    mntExe: d.mntExe ?? 0,
    iva: d.iva ?? 0,
    mntTotal: d.mntTotal,
    estado,
    eventos: d.events.map((ev) => ev.codEvento),
  });
  let documentos;
  if (operacion === 'ventas')
    documentos = accepted.filter((d) => d.rutEmisor === rut).map((d) => row(d, 'REGISTRO'));
  else {
    documentos = [
      ...accepted
        .filter((d) => d.rutReceptor === rut)
        .map((d) => ({ ...row(d, purchaseEstado(d, now)), cesion: null })),
      ...e.purchases
        .filter((p) => p.rutReceptor === rut && p.fchEmis.startsWith(periodo))
        .map((p) => {
          const d = seededAsDocument(env, p);
          return {
            ...row(d, purchaseEstado(d, now)),
            fechaRecepcion: p.fechaRecepcion,
            cesion: p.cesion ?? null,
          };
        }),
    ];
  }
  documentos.sort((a, b) => a.tipoDte - b.tipoDte || a.folio - b.folio);
  ctx.body = { rutEmpresa: rut, periodo, operacion, documentos };
}
