/**
 * The SII's side of boletas de honorarios electrónicas (BHE), for issues 16 and 29.
 *
 * The real SII issues and annuls BHE in its web portal ("Boletas de honorarios electrónicas");
 * PROTOCOL.md names no web service for them, so EVERYTHING here (paths, JSON fields, codes) is
 * this simulator's own and UNCONFIRMED against the SII. Its rules are the SII's published ones
 * (docs/boletas-bhe.md): the retention of the year of issue (Ley 21.133 schedule, @dte/engine's
 * table) computed by the SII; a date not ahead of today and in today's year; annulment at once
 * until day 10 of the month after the issue, then a request the receiver confirms (VCA: the BHE
 * stays valid meanwhile) until 1 March of the next year, the outer limit (@dte/engine
 * bheAnnulmentWindow). BHEs live in the environment's state, so they and their numbers survive a
 * restart like every other record (snapshot.ts).
 *
 *   POST {env}/bhe/emitir   Cookie TOKEN; JSON {rutEmisor, rutReceptor, fechaEmision, descripcion,
 *                           montoBruto, retencion, retencionPor: receptor|emisor}
 *                           → 200 {numero, estado: "VIGENTE", montoBruto, tasa, retencion, liquido}
 *                           401 token; 403 the user may not issue for rutEmisor; 422 {codigo:
 *                           "RETENCION", esperado} when the retention is not the year's;
 *                           422 {codigo: "RECEPTOR"} when the receiver is the issuer;
 *                           422 {codigo: "FECHA"} a date ahead or in another year
 *   POST {env}/bhe/anular   JSON {rutEmisor, numero, motivo} → 200 {numero, estado: "ANULADA"} until
 *                           day 10 of the next month, 200 {numero, estado: "VCA", limite} after it
 *                           (the receiver must confirm); 404 unknown; 409 already annulled or
 *                           already asked; 422 {codigo: "PLAZO", limite} after the outer limit
 *   POST {env}/bhe/confirmar-anulacion   Cookie TOKEN of the RECEIVER; JSON {rutEmisor, numero,
 *                           acepta: boolean} → 200 {numero, estado}: ANULADA when accepted,
 *                           VIGENTE when refused; 409 nothing pending
 *   GET  {env}/bhe/:rut/:numero → the record (a request not confirmed by the limit has lapsed:
 *                           VIGENTE again)
 */
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { chileDate } from '../chile-time';
import { bheAnnulmentWindow, bheFechaProblem, computeBheRetencion } from '../engine';
import { applyFault, cookieToken, readJson } from '../http';
import { normalizeRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import type { EnvState } from '../state';
import { SII_ENVS, type BheRecord, type SiiEnv } from '../types';

export type { BheRecord };

/** The record by issuer and number; a request the receiver left unconfirmed past the limit lapses. */
function findBhe(e: EnvState, rutEmisor: string, numero: number, hoy: string): BheRecord | undefined {
  const rec = e.bhes.get(`${rutEmisor}|${numero}`);
  if (rec?.estado === 'VCA' && hoy > bheAnnulmentWindow(rec.fechaEmision, hoy).limite) {
    rec.estado = 'VIGENTE';
    rec.anulacionRechazada = true;
  }
  return rec;
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
    router.post(`/${env}/bhe/confirmar-anulacion`, (ctx) => confirmar(sim, env, ctx));
    // the receiver answering in the SII's portal, for tests and demos (no token: an admin route)
    router.post(`/admin/${env}/bhe/:rut/:numero/confirmar-anulacion`, async (ctx) => {
      const b = ((await readJson(ctx).catch(() => ({}))) ?? {}) as Record<string, unknown>;
      const rec = findBhe(
        sim.state.env[env],
        normalizeRut(String(ctx.params.rut)) ?? '',
        Number(ctx.params.numero),
        chileDate(sim.state.now()),
      );
      if (!rec) return reply(ctx, 404, { codigo: 'NO_EXISTE', error: 'BHE no existe' });
      decide(rec, b.acepta === true, chileDate(sim.state.now()), ctx);
    });
    router.get(`/${env}/bhe/:rut/:numero`, (ctx) => {
      const rec = findBhe(
        sim.state.env[env],
        normalizeRut(String(ctx.params.rut)) ?? '',
        Number(ctx.params.numero),
        chileDate(sim.state.now()),
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
  const fechaProblem = bheFechaProblem(fecha, hoy);
  if (fechaProblem)
    return reply(ctx, 422, { codigo: 'FECHA', error: `fecha de emisión ${fecha}: ${fechaProblem}` });
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
  const e = sim.state.env[env];
  const numero = (e.lastBhe.get(rutEmisor) ?? 0) + 1;
  e.lastBhe.set(rutEmisor, numero);
  const rec: BheRecord = {
    numero,
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
  e.bhes.set(`${rutEmisor}|${rec.numero}`, rec);
  reply(ctx, 200, rec);
}

async function anular(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'upload')) return;
  const b = ((await readJson(ctx).catch(() => ({}))) ?? {}) as Record<string, unknown>;
  const rutEmisor = authenticated(sim, env, ctx, normalizeRut(String(b.rutEmisor ?? '')));
  if (!rutEmisor) return;
  const hoy = chileDate(sim.state.now());
  const rec = findBhe(sim.state.env[env], rutEmisor, Number(b.numero), hoy);
  if (!rec) return reply(ctx, 404, { codigo: 'NO_EXISTE', error: 'BHE no existe' });
  if (rec.estado === 'ANULADA')
    return reply(ctx, 409, { codigo: 'ANULADA', error: 'la BHE ya está anulada' });
  if (rec.estado === 'VCA')
    return reply(ctx, 409, {
      codigo: 'SOLICITADA',
      error: 'la anulación ya fue solicitada y espera al receptor',
    });
  const w = bheAnnulmentWindow(rec.fechaEmision, hoy);
  if (w.modo === 'vencida')
    return reply(ctx, 422, {
      codigo: 'PLAZO',
      error: `plazo de anulación vencido el ${w.limite}`,
      limite: w.limite,
    });
  rec.motivoAnulacion = String(b.motivo ?? '');
  if (w.modo === 'inmediata') {
    rec.estado = 'ANULADA';
    rec.anuladaEl = hoy;
    return reply(ctx, 200, { numero: rec.numero, estado: rec.estado });
  }
  rec.estado = 'VCA';
  rec.solicitudAnulacion = hoy;
  delete rec.anulacionRechazada;
  reply(ctx, 200, { numero: rec.numero, estado: rec.estado, limite: w.limite });
}

/** The receiver confirms (acepta) or refuses an annulment request, with its own token. */
async function confirmar(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'upload')) return;
  const b = ((await readJson(ctx).catch(() => ({}))) ?? {}) as Record<string, unknown>;
  const e = sim.state.env[env];
  const t = checkToken(e, cookieToken(ctx), sim.state.now());
  if (!t.ok) return reply(ctx, 401, { codigo: 'TOKEN', error: `token ${t.reason}` });
  const rutEmisor = normalizeRut(String(b.rutEmisor ?? '')) ?? '';
  const hoy = chileDate(sim.state.now());
  const rec = findBhe(e, rutEmisor, Number(b.numero), hoy);
  if (!rec) return reply(ctx, 404, { codigo: 'NO_EXISTE', error: 'BHE no existe' });
  if (!authorize(sim, e, t.token.rut, rec.rutReceptor))
    return reply(ctx, 403, { codigo: 'PERMISO', error: 'solo el receptor confirma la anulación' });
  decide(rec, b.acepta === true, hoy, ctx);
}

function decide(rec: BheRecord, acepta: boolean, hoy: string, ctx: Context): void {
  if (rec.estado !== 'VCA')
    return reply(ctx, 409, { codigo: 'SIN_SOLICITUD', error: 'la BHE no tiene una anulación pendiente' });
  if (acepta) {
    rec.estado = 'ANULADA';
    rec.anuladaEl = hoy;
  } else {
    rec.estado = 'VIGENTE';
    rec.anulacionRechazada = true;
  }
  reply(ctx, 200, { numero: rec.numero, estado: rec.estado });
}
