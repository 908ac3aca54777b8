/**
 * Admin API (JSON; not part of the SII): enrolment, inspection, seeding, triggers, clock, reset.
 * See the README for every path and body.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { jsonError, readJson } from '../http';
import { uploadState } from '../progress';
import { isValidRut, normalizeRut } from '../rut';
import type { Sim } from '../sim';
import { parseTrigger, TriggerError } from '../triggers';
import type { DocumentRecord, PurchaseRecord, SiiEnv, UploadRecord } from '../types';
import { SII_ENVS } from '../types';

function envParam(ctx: Context): SiiEnv | undefined {
  const env = ctx.params.env as string;
  if (env === 'cert' || env === 'prod') return env;
  jsonError(ctx, 404, 'env_desconocido', 'environment must be cert or prod');
  return undefined;
}

async function body(ctx: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const b = await readJson(ctx);
    if (typeof b === 'object' && b !== null && !Array.isArray(b)) return b as Record<string, unknown>;
  } catch {
    /* answered below */
  }
  jsonError(ctx, 422, 'json_invalido', 'body must be a JSON object');
  return undefined;
}

function rutList(raw: unknown): string[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out: string[] = [];
  for (const r of raw) {
    const n = normalizeRut(String(r));
    if (!n || !isValidRut(n)) return undefined;
    out.push(n);
  }
  return out;
}

function showDocument(d: DocumentRecord) {
  return {
    ...d,
    receivedAt: new Date(d.receivedAt).toISOString(),
    events: d.events.map((e) => ({ ...e, at: new Date(e.at).toISOString() })),
  };
}

function showUpload(sim: Sim, u: UploadRecord) {
  return {
    ...u,
    receivedAt: new Date(u.receivedAt).toISOString(),
    estadoActual: uploadState(u, sim.state.now(), sim.options.timings),
    documents: u.documents.map(showDocument),
  };
}

export function adminRoutes(sim: Sim, router: Router): void {
  router.get('/admin/sii-keys', (ctx) => {
    ctx.body = sim.siiKeys;
  });

  router.put('/admin/:env/companies/:rut', async (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    const rut = normalizeRut(ctx.params.rut);
    if (!rut || !isValidRut(rut)) return jsonError(ctx, 422, 'rut_invalido', 'company RUT is not valid');
    const b = await body(ctx);
    if (!b) return;
    const senders = rutList(b.senders ?? []);
    if (!senders) return jsonError(ctx, 422, 'senders_invalidos', 'senders must be a list of valid RUTs');
    const fchResol = String(b.fchResol ?? '');
    const nroResol = Number(b.nroResol ?? 0);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(fchResol))
      return jsonError(ctx, 422, 'fchResol_invalida', 'fchResol must be YYYY-MM-DD');
    if (!Number.isInteger(nroResol) || nroResol < 0 || nroResol > 999999)
      return jsonError(ctx, 422, 'nroResol_invalido', 'nroResol must be an integer 0..999999');
    if (env === 'cert' && nroResol !== 0)
      return jsonError(ctx, 422, 'nroResol_invalido', 'certification uses nroResol 0');
    const company = {
      rut,
      razonSocial: String(b.razonSocial ?? `EMPRESA ${rut}`),
      fchResol,
      nroResol,
      senders: new Set(senders),
    };
    sim.state.env[env].companies.set(rut, company);
    ctx.body = { ...company, senders: [...company.senders] };
  });

  router.post('/admin/:env/companies/:rut/senders', async (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    const company = sim.state.env[env].companies.get(normalizeRut(ctx.params.rut) ?? '');
    if (!company) return jsonError(ctx, 404, 'empresa_desconocida', 'enrol the company first (PUT)');
    const b = await body(ctx);
    if (!b) return;
    const rut = rutList([b.rut]);
    if (!rut) return jsonError(ctx, 422, 'rut_invalido', 'rut must be a valid RUT');
    company.senders.add(rut[0]);
    ctx.body = { ...company, senders: [...company.senders] };
  });

  router.get('/admin/:env/companies', (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    ctx.body = [...sim.state.env[env].companies.values()].map((c) => ({ ...c, senders: [...c.senders] }));
  });

  router.get('/admin/:env/uploads', (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    ctx.body = [...sim.state.env[env].uploads.values()].map((u) => showUpload(sim, u));
  });

  router.get('/admin/:env/uploads/:trackId', (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    const u = sim.state.env[env].uploads.get(ctx.params.trackId);
    if (!u) return jsonError(ctx, 404, 'track_desconocido', 'no such track id');
    ctx.body = showUpload(sim, u);
  });

  router.get('/admin/:env/documents', (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    ctx.body = [...sim.state.env[env].documents.values()].map(showDocument);
  });

  router.post('/admin/:env/purchases', async (ctx) => {
    const env = envParam(ctx);
    if (!env) return;
    const b = await body(ctx);
    if (!b) return;
    const receptor = normalizeRut(String(b.rutReceptor ?? ''));
    const emisor = normalizeRut(String(b.rutEmisor ?? ''));
    const fchEmis = String(b.fchEmis ?? '');
    const nums = ['tipoDte', 'folio', 'mntNeto', 'mntExe', 'iva', 'mntTotal'].map((k) => Number(b[k] ?? 0));
    if (
      !receptor ||
      !emisor ||
      !/^\d{4}-\d{2}-\d{2}$/.test(fchEmis) ||
      nums.some((n) => !Number.isInteger(n) || n < 0) ||
      nums[0] === 0 ||
      nums[1] === 0
    )
      return jsonError(
        ctx,
        422,
        'compra_invalida',
        'needs rutReceptor, rutEmisor, tipoDte, folio, fchEmis (YYYY-MM-DD) and integer amounts mntNeto, mntExe, iva, mntTotal',
      );
    const p: PurchaseRecord = {
      rutReceptor: receptor,
      rutEmisor: emisor,
      razonSocialEmisor: b.razonSocialEmisor === undefined ? undefined : String(b.razonSocialEmisor),
      tipoDte: nums[0],
      folio: nums[1],
      fchEmis,
      mntNeto: nums[2],
      mntExe: nums[3],
      iva: nums[4],
      mntTotal: nums[5],
      fechaRecepcion: String(b.fechaRecepcion ?? new Date(sim.state.now()).toISOString()),
    };
    sim.state.env[env].purchases.push(p);
    ctx.status = 201;
    ctx.body = p;
  });

  router.put('/admin/exchange-rates', async (ctx) => {
    const b = await body(ctx);
    if (!b) return;
    const moneda = String(b.moneda ?? '');
    const fecha = String(b.fecha ?? '');
    const valor = Number(b.valor);
    if (!/^[A-Z]{3}$/.test(moneda) || !/^\d{4}-\d{2}-\d{2}$/.test(fecha) || !(valor > 0))
      return jsonError(
        ctx,
        422,
        'tipo_cambio_invalido',
        'needs moneda (ISO 4217), fecha (YYYY-MM-DD), valor > 0',
      );
    sim.state.rates.set(`${moneda}|${fecha}`, { moneda, fecha, valor });
    ctx.body = { moneda, fecha, valor };
  });

  router.get('/admin/triggers', (ctx) => {
    ctx.body = sim.state.triggers.list();
  });
  router.post('/admin/triggers', async (ctx) => {
    let raw: unknown;
    try {
      raw = await readJson(ctx);
    } catch {
      return jsonError(ctx, 422, 'json_invalido', 'body must be JSON');
    }
    try {
      const list = (Array.isArray(raw) ? raw : [raw]).map(parseTrigger);
      list.forEach((t) => sim.state.triggers.add(t));
      ctx.status = 201;
      ctx.body = sim.state.triggers.list();
    } catch (err) {
      if (err instanceof TriggerError) return jsonError(ctx, 422, 'trigger_invalido', err.message);
      throw err;
    }
  });
  router.delete('/admin/triggers', (ctx) => {
    sim.state.triggers.clear();
    ctx.status = 204;
  });

  router.post('/admin/clock', async (ctx) => {
    const b = await body(ctx);
    if (!b) return;
    if (typeof b.advanceMs === 'number') sim.state.clockOffsetMs += b.advanceMs;
    else if (typeof b.offsetMs === 'number') sim.state.clockOffsetMs = b.offsetMs;
    else return jsonError(ctx, 422, 'reloj_invalido', 'give advanceMs or offsetMs (numbers)');
    ctx.body = { offsetMs: sim.state.clockOffsetMs, now: new Date(sim.state.now()).toISOString() };
  });

  router.post('/admin/reset', (ctx) => {
    sim.state.reset();
    ctx.status = 204;
  });

  router.get('/admin', (ctx) => {
    ctx.body = {
      environments: SII_ENVS,
      autoEnrol: sim.options.autoEnrol,
      timings: sim.options.timings,
      now: new Date(sim.state.now()).toISOString(),
    };
  });
}
