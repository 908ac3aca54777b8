/**
 * Exchange-rate source for export documents (the SII publishes none; the service needs one):
 *
 *   GET /tipo-cambio/{moneda}/{YYYY-MM-DD} → 200 { moneda, fecha, valor, fechaPublicacion }
 *
 * The rate is the one set for that date, or the latest set before it (rates are not published
 * on holidays); 404 { error: 'sin_tipo_cambio' } when there is none. Rates are set with
 * PUT /admin/exchange-rates; an outage is a fault trigger on operation "tipoCambio".
 */
import type { Context } from 'koa';
import { applyFault, jsonError } from '../http';
import type { Sim } from '../sim';

export async function exchangeRate(sim: Sim, ctx: Context, moneda: string, fecha: string): Promise<void> {
  if (await applyFault(ctx, sim.state, undefined, 'tipoCambio')) return;
  if (!/^[A-Z]{3}$/.test(moneda) || !/^\d{4}-\d{2}-\d{2}$/.test(fecha))
    return jsonError(ctx, 422, 'parametros_invalidos', 'expected /tipo-cambio/{ISO 4217 code}/{YYYY-MM-DD}');
  let best: { fecha: string; valor: number } | undefined;
  for (const r of sim.state.rates.values())
    if (r.moneda === moneda && r.fecha <= fecha && (!best || r.fecha > best.fecha)) best = r;
  if (!best) return jsonError(ctx, 404, 'sin_tipo_cambio', `no rate for ${moneda} on or before ${fecha}`);
  ctx.body = { moneda, fecha, valor: best.valor, fechaPublicacion: best.fecha };
}
