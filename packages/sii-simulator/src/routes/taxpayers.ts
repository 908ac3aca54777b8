/**
 * Taxpayer situation (situación tributaria de terceros): whether a RUT exists in the SII's
 * register and has started activities. The real SII shows it on a web page (zeus.sii.cl, "Consulta
 * Situación Tributaria de Terceros", behind a captcha); this is the simulator's JSON stand-in
 * (UNCONFIRMED shape), the same in both environments because the register is one.
 *
 *   GET /contribuyentes/{rut}/situacion → 200 {rut, razonSocial, estado, inicioActividades}
 *     estado: activo | sin_inicio_actividades | rut_inexistente; 400 {error:'rut_invalido'}
 *   PUT /admin/contribuyentes/{rut} {estado, razonSocial?, inicioActividades?}  seeds one
 *   DELETE /admin/contribuyentes/{rut}                                           forgets it
 *
 * A RUT without a seeded situation is `activo` when it is a company enrolled in either
 * environment (or when the simulator auto-enrols), else `rut_inexistente`.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { jsonError, readJson } from '../http';
import { isValidRut, normalizeRut } from '../rut';
import type { Sim } from '../sim';

export const TAXPAYER_ESTADOS = ['activo', 'sin_inicio_actividades', 'rut_inexistente'] as const;
export type TaxpayerEstado = (typeof TAXPAYER_ESTADOS)[number];

interface Taxpayer {
  estado: TaxpayerEstado;
  razonSocial: string | null;
  inicioActividades: string | null;
}

const seeded = new WeakMap<Sim, Map<string, Taxpayer>>();
const registerOf = (sim: Sim) => {
  let m = seeded.get(sim);
  if (!m) seeded.set(sim, (m = new Map()));
  return m;
};

function rutParam(ctx: Context): string | undefined {
  const rut = normalizeRut(String(ctx.params.rut));
  if (rut && isValidRut(rut)) return rut;
  jsonError(ctx, 400, 'rut_invalido', 'RUT must be 12345678-5 with a right check digit');
  return undefined;
}

function situation(sim: Sim, rut: string): Taxpayer {
  const s = registerOf(sim).get(rut);
  if (s) return s;
  const company = sim.state.env.cert.companies.get(rut) ?? sim.state.env.prod.companies.get(rut);
  if (company || sim.options.autoEnrol) {
    return { estado: 'activo', razonSocial: company?.razonSocial ?? null, inicioActividades: '2020-01-01' };
  }
  return { estado: 'rut_inexistente', razonSocial: null, inicioActividades: null };
}

export function taxpayerRoutes(sim: Sim, router: Router): void {
  router.get('/contribuyentes/:rut/situacion', (ctx) => {
    const rut = rutParam(ctx);
    if (!rut) return;
    ctx.body = { rut, ...situation(sim, rut) };
  });
  router.put('/admin/contribuyentes/:rut', async (ctx) => {
    const rut = rutParam(ctx);
    if (!rut) return;
    let b: Record<string, unknown>;
    try {
      b = (await readJson(ctx)) as Record<string, unknown>;
    } catch {
      return jsonError(ctx, 422, 'json_invalido', 'body must be a JSON object');
    }
    if (!TAXPAYER_ESTADOS.includes(b?.estado as TaxpayerEstado)) {
      return jsonError(ctx, 422, 'estado_invalido', `estado must be one of ${TAXPAYER_ESTADOS.join(', ')}`);
    }
    const t: Taxpayer = {
      estado: b.estado as TaxpayerEstado,
      razonSocial: typeof b.razonSocial === 'string' ? b.razonSocial : null,
      inicioActividades:
        b.estado === 'activo'
          ? typeof b.inicioActividades === 'string'
            ? b.inicioActividades
            : '2020-01-01'
          : null,
    };
    registerOf(sim).set(rut, t);
    ctx.body = { rut, ...t };
  });
  router.delete('/admin/contribuyentes/:rut', (ctx) => {
    const rut = rutParam(ctx);
    if (!rut) return;
    registerOf(sim).delete(rut);
    ctx.status = 204;
  });
}
