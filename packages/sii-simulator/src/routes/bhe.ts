/**
 * The SII's side of boletas de honorarios electrónicas (BHE), for issue 16.
 *
 * The real SII issues and annuls BHE in its web portal ("Boletas de honorarios electrónicas");
 * PROTOCOL.md names no web service for them, so EVERYTHING here (paths, JSON fields, codes) is
 * this simulator's own and UNCONFIRMED against the SII. Its rules are the legal ones: the
 * retention of the year of issue (Ley 21.133 schedule, @dte/engine's table) computed by the SII,
 * and annulment only within 3 months of the issue date.
 *
 *   POST {env}/bhe/emitir   Cookie TOKEN; JSON {rutEmisor, rutReceptor, fechaEmision, descripcion,
 *                           montoBruto, retencion, retencionPor: receptor|emisor}
 *                           → 200 {numero, estado: "VIGENTE", montoBruto, tasa, retencion, liquido}
 *                           401 token; 403 the user may not issue for rutEmisor; 422 {codigo:
 *                           "RETENCION", esperado} when the retention is not the year's;
 *                           422 {codigo: "RECEPTOR"} when the receiver is the issuer
 *   POST {env}/bhe/anular   JSON {rutEmisor, numero, motivo} → 200 {numero, estado: "ANULADA"};
 *                           404 unknown; 409 already annulled; 422 {codigo: "PLAZO"} after 3 months
 *   GET  {env}/bhe/:rut/:numero → the record
 */
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { chileDate } from '../chile-time';
import { bheAnnulmentDeadline, computeBheRetencion } from '../engine';
import { applyFault, cookieToken, readJson } from '../http';
import { normalizeRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import type { EnvState } from '../state';
import { SII_ENVS, type SiiEnv } from '../types';

export interface BheRecord {
  numero: number;
  rutEmisor: string;
  rutReceptor: string;
  fechaEmision: string;
  descripcion: string;
  montoBruto: number;
  tasa: number;
  retencion: number;
  liquido: number;
  retencionPor: 'receptor' | 'emisor';
  estado: 'VIGENTE' | 'ANULADA';
  motivoAnulacion?: string;
}

/** Per environment state (a reset of the simulator makes new EnvStates, hence new stores). */
const stores = new WeakMap<EnvState, { next: number; byKey: Map<string, BheRecord> }>();
function store(e: EnvState) {
  let s = stores.get(e);
  if (!s) {
    s = { next: 1, byKey: new Map() };
    stores.set(e, s);
  }
  return s;
}

function reply(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = body;
}

export function bheRoutes(sim: Sim, router: Router): void {
  for (const env of SII_ENVS) {
    router.post(`/${env}/bhe/emitir`, (ctx) => emitir(sim, env, ctx));
    router.post(`/${env}/bhe/anular`, (ctx) => anular(sim, env, ctx));
    router.get(`/${env}/bhe/:rut/:numero`, (ctx) => {
      const rec = store(sim.state.env[env]).byKey.get(
        `${normalizeRut(String(ctx.params.rut))}|${ctx.params.numero}`,
      );
      if (!rec) return reply(ctx, 404, { codigo: 'NO_EXISTE', error: 'BHE no existe' });
      reply(ctx, 200, rec);
    });
  }
}

function authenticated(sim: Sim, env: SiiEnv, ctx: Context, rutEmisor: string | null): string | undefined {
  const e = sim.state.env[env];
  const t = checkToken(e, cookieToken(ctx), sim.state.now());
  if (!t.ok) {
    reply(ctx, 401, { codigo: 'TOKEN', error: `token ${t.reason}` });
    return undefined;
  }
  if (!rutEmisor || !authorize(sim, e, t.token.rut, rutEmisor)) {
    reply(ctx, 403, {
      codigo: 'PERMISO',
      error: 'usuario sin permiso para emitir boletas de honorarios del emisor',
    });
    return undefined;
  }
  return rutEmisor;
}

async function emitir(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'upload')) return;
  const b = ((await readJson(ctx).catch(() => ({}))) ?? {}) as Record<string, unknown>;
  const rutEmisor = authenticated(sim, env, ctx, normalizeRut(String(b.rutEmisor ?? '')));
  if (!rutEmisor) return;
  const rutReceptor = normalizeRut(String(b.rutReceptor ?? ''));
  if (!rutReceptor || rutReceptor === rutEmisor)
    return reply(ctx, 422, { codigo: 'RECEPTOR', error: 'receptor inválido: debe ser otro contribuyente' });
  const fecha = String(b.fechaEmision ?? '');
  const hoy = chileDate(sim.state.now());
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fecha) || fecha > hoy)
    return reply(ctx, 422, { codigo: 'FECHA', error: `fecha de emisión inválida o futura (hoy ${hoy})` });
  const monto = Number(b.montoBruto);
  if (!Number.isSafeInteger(monto) || monto <= 0)
    return reply(ctx, 422, { codigo: 'MONTO', error: 'monto bruto inválido' });
  const a = computeBheRetencion(monto, fecha);
  if (Number(b.retencion) !== a.retencion)
    return reply(ctx, 422, {
      codigo: 'RETENCION',
      error: `la retención de ${fecha.slice(0, 4)} (${a.tasa} %) es ${a.retencion}`,
      esperado: a.retencion,
    });
  const s = store(sim.state.env[env]);
  const rec: BheRecord = {
    numero: s.next++,
    rutEmisor,
    rutReceptor,
    fechaEmision: fecha,
    descripcion: String(b.descripcion ?? ''),
    montoBruto: a.montoBruto,
    tasa: a.tasa,
    retencion: a.retencion,
    liquido: a.liquido,
    retencionPor: b.retencionPor === 'emisor' ? 'emisor' : 'receptor',
    estado: 'VIGENTE',
  };
  s.byKey.set(`${rutEmisor}|${rec.numero}`, rec);
  reply(ctx, 200, rec);
}

async function anular(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'upload')) return;
  const b = ((await readJson(ctx).catch(() => ({}))) ?? {}) as Record<string, unknown>;
  const rutEmisor = authenticated(sim, env, ctx, normalizeRut(String(b.rutEmisor ?? '')));
  if (!rutEmisor) return;
  const rec = store(sim.state.env[env]).byKey.get(`${rutEmisor}|${Number(b.numero)}`);
  if (!rec) return reply(ctx, 404, { codigo: 'NO_EXISTE', error: 'BHE no existe' });
  if (rec.estado === 'ANULADA')
    return reply(ctx, 409, { codigo: 'ANULADA', error: 'la BHE ya está anulada' });
  const limite = bheAnnulmentDeadline(rec.fechaEmision);
  if (chileDate(sim.state.now()) > limite)
    return reply(ctx, 422, { codigo: 'PLAZO', error: `plazo de anulación vencido el ${limite}`, limite });
  rec.estado = 'ANULADA';
  rec.motivoAnulacion = String(b.motivo ?? '');
  reply(ctx, 200, { numero: rec.numero, estado: rec.estado });
}
