/**
 * The SII's boleta REST channel (PROTOCOL.md §1 and §11), separate from the SOAP/DTEUpload path
 * of facturas. Real hosts: seed, token and status at `api.sii.cl/recursos/v1` (certification
 * `apicert.sii.cl`), the upload at `rahue.sii.cl/recursos/v1` (certification `pangal.sii.cl`);
 * here all of them live under the environment's base path:
 *
 *   GET  {env}/recursos/v1/boleta.electronica.semilla          → SII:RESPUESTA with SEMILLA
 *   POST {env}/recursos/v1/boleta.electronica.token            → body: the signed getToken XML
 *                                                                 (the same document as the SOAP
 *                                                                 getToken's pszXml); SII:RESPUESTA
 *                                                                 with ESTADO, GLOSA, TOKEN
 *   POST {env}/recursos/v1/boleta.electronica.envio            → multipart (rutSender, dvSender,
 *                                                                 rutCompany, dvCompany, archivo)
 *                                                                 with Cookie TOKEN; JSON reply
 *                                                                 {rut_emisor, rut_envia, trackid,
 *                                                                 fecha_recepcion, estado: "REC", file}
 *   GET  {env}/recursos/v1/boleta.electronica.envio/{rut}-{dv}-{trackid}
 *                                                               → JSON {rut_emisor, rut_envia, trackid,
 *                                                                 fecha_recepcion, estado, estadistica[],
 *                                                                 detalle_rep_rech[]}
 *
 * Every PROTOCOL.md source for this channel is third-party code (Odoo, other clients): the whole
 * shape is UNCONFIRMED against an SII document. What this simulator adds on its own account, also
 * UNCONFIRMED: the HTTP statuses of errors (401 bad or missing token, both on envío and status; 403
 * sender not authorized for the company; 400 a form or file that is not an EnvioBOLETA; 409 the same
 * file sent again, with the first trackid; 404 an unknown trackid), the JSON error body
 * `{codigo, error}`, that a token of the SOAP channel is accepted here (one token table), the
 * names inside `estadistica` ({tipo, informados, aceptados, rechazados, reparos}), and that `REC` is
 * shown instead of the SOAP "-11" while a send is not yet registered. `detalle_rep_rech` is
 * {tipo, folio, estado, descripcion, error[{seccion, linea, nivel, codigo, descripcion, detalle}]},
 * the shape of the SII's own boleta API sample as public clients quote it. A whole send can also
 * end RSC, RFR, RCT, RCO, RPT or VOF (a trigger chooses the last three): final, with `errores`.
 *
 *   GET  {env}/recursos/v1/boleta.electronica/{rut}-{dv}-{tipo}-{folio}/estado
 *        ?rut_receptor=&dv_receptor=&monto=&fechaEmision=DD-MM-YYYY
 *                                                               → JSON {estado, glosa}: one boleta, with
 *                                                                 QueryEstDte's codes (DOK, DNK, FAU with
 *                                                                 "RCH - …" when rejected, EMP)
 *
 * The content checks are the DTEUpload ones (checks.ts) with EnvioBOLETA_v11.xsd as the schema:
 * signatures, Carátula, CAF, TED, folio used before; each boleta's result is DOK (accepted),
 * RPR (accepted with objections) or RCH (rejected).
 */
import { createHash } from 'node:crypto';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { checkEnvelope } from '../checks';
import { readEnvio, type ParsedEnvio } from '../engine';
import { chileDateTime } from '../chile-time';
import { applyFault, cookieToken, readBody, xmlReply } from '../http';
import { uploadState } from '../progress';
import { joinRut, normalizeRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import { elements, siiRespuesta } from '../soap';
import { SII_ENVS, type SiiEnv } from '../types';
import { tokenFromSignedSeed } from './auth';
import { decodeXmlFile, parseForm, recordUpload } from './upload';

export const BOLETA_REST_BASE = '/recursos/v1';

export function boletaRestRoutes(sim: Sim, router: Router): void {
  for (const env of SII_ENVS) {
    const base = `/${env}${BOLETA_REST_BASE}`;
    router.get(`${base}/boleta.electronica.semilla`, (ctx) => semilla(sim, env, ctx));
    router.post(`${base}/boleta.electronica.token`, (ctx) => token(sim, env, ctx));
    router.post(`${base}/boleta.electronica.envio`, (ctx) => envio(sim, env, ctx));
    router.get(`${base}/boleta.electronica.envio/:id`, (ctx) => estado(sim, env, ctx, String(ctx.params.id)));
    router.get(`${base}/boleta.electronica/:id/estado`, (ctx) =>
      documentoEstado(sim, env, ctx, String(ctx.params.id)),
    );
  }
}

function jsonReply(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = body;
}

async function semilla(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getSeed')) return;
  const e = sim.state.env[env];
  const seed = e.newSeed();
  e.seeds.set(seed, { seed, issuedAt: sim.state.now() });
  xmlReply(ctx, siiRespuesta(elements([['ESTADO', '00']]), elements([['SEMILLA', seed]])));
}

async function token(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getToken')) return;
  const r = tokenFromSignedSeed(sim, env, (await readBody(ctx)).toString('utf8'));
  xmlReply(
    ctx,
    siiRespuesta(
      elements([
        ['ESTADO', r.estado],
        ['GLOSA', r.glosa],
      ]),
      r.token === undefined ? undefined : elements([['TOKEN', r.token]]),
    ),
  );
}

async function envio(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'upload')) return;
  const e = sim.state.env[env];
  const now = sim.state.now();
  const t = checkToken(e, cookieToken(ctx), now);
  if (!t.ok) return jsonReply(ctx, 401, { codigo: 5, error: `token ${t.reason}` });
  let form;
  try {
    form = await parseForm(ctx, sim.options.maxUploadBytes);
  } catch (err) {
    return jsonReply(ctx, 400, {
      codigo: 2,
      error: `multipart/form-data expected: ${(err as Error).message}`,
    });
  }
  const sender = joinRut(form.fields.rutSender ?? '', form.fields.dvSender ?? '');
  const company = joinRut(form.fields.rutCompany ?? '', form.fields.dvCompany ?? '');
  if (!sender || sender !== t.token.rut)
    return jsonReply(ctx, 403, { codigo: 1, error: 'rutSender no corresponde al usuario autenticado' });
  if (!company || (!sim.options.autoEnrol && !e.companies.has(company)))
    return jsonReply(ctx, 403, { codigo: 6, error: 'empresa no autorizada a enviar boletas' });
  if (!authorize(sim, e, sender, company))
    return jsonReply(ctx, 403, { codigo: 1, error: 'usuario sin permiso para enviar por la empresa' });
  const file = form.file;
  if (!file || file.data.length === 0 || file.truncated)
    return jsonReply(ctx, 400, { codigo: 2, error: 'archivo vacío, truncado o mayor que el límite' });

  await e.serialize(async () => {
    const trigger = sim.state.triggers.takeUploadTrigger(env);
    if (trigger?.kind === 'upload-status' && trigger.status !== 0)
      return jsonReply(ctx, 400, { codigo: trigger.status, error: 'rechazo forzado por trigger' });
    const sha256 = createHash('sha256').update(file.data).digest('hex');
    const previous = e.uploadHashes.get(sha256);
    if (trigger?.kind === 'repeated' || previous)
      return jsonReply(ctx, 409, { codigo: 99, error: 'envío repetido', trackid: Number(previous ?? 0) });
    const xml = decodeXmlFile(file.data);
    let parsed: ParsedEnvio;
    try {
      parsed = readEnvio(xml);
    } catch {
      return jsonReply(ctx, 400, { codigo: 7, error: 'el archivo no es XML' });
    }
    const root = parsed.document.documentElement?.localName ?? undefined;
    if (root !== 'EnvioBOLETA')
      return jsonReply(ctx, 400, { codigo: 7, error: `el archivo es ${root}, se esperaba EnvioBOLETA` });
    const c = e.companies.get(company)!;
    const adoptResolution = sim.options.autoEnrol && c.fchResol === '';
    const outcome = await checkEnvelope({
      env,
      file: file.data,
      parsed,
      senderRut: sender,
      companyRut: company,
      company: c,
      adoptResolution,
      siiPublicKeys: { [String(sim.siiKeys[env].idk)]: sim.siiKeys[env].publicKeyPem },
      folioUsed: (rut, tipo, folio) => e.documents.has(e.documentKey(rut, tipo, folio)),
      now,
      reparoDays: sim.options.reparoDays,
      schema: 'EnvioBOLETA',
    });
    if (outcome.documents.some((d) => d.tipoDte !== 39 && d.tipoDte !== 41)) {
      outcome.verdict = 'RSC';
      outcome.errors = ['el envío de boletas solo admite los tipos 39 y 41'];
      outcome.documents = [];
    }
    const trackId = recordUpload(sim, env, {
      sender,
      companyRut: company,
      company: c,
      fileName: file.name,
      sha256,
      xml,
      parsed,
      now,
      outcome,
      trigger,
      adoptResolution,
    });
    jsonReply(ctx, 200, {
      rut_emisor: company,
      rut_envia: sender,
      trackid: Number(trackId),
      fecha_recepcion: chileDateTime(now),
      estado: 'REC',
      file: file.name,
    });
  });
}

/** Per-boleta result code of the REST status (PROTOCOL.md §11: DOK / RPR / RLV / RCH). */
const RESULT_CODE = { ACEPTADO: 'DOK', REPARO: 'RPR', RECHAZADO: 'RCH' } as const;

async function estado(sim: Sim, env: SiiEnv, ctx: Context, id: string): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getEstUp')) return;
  const e = sim.state.env[env];
  const now = sim.state.now();
  const t = checkToken(e, cookieToken(ctx), now);
  if (!t.ok) return jsonReply(ctx, 401, { codigo: 5, error: `token ${t.reason}` });
  const m = /^(\d{1,9})-([0-9kK])-(\d+)$/.exec(id);
  const company = m ? joinRut(m[1]!, m[2]!) : null;
  if (!m || !company) return jsonReply(ctx, 400, { codigo: 1, error: 'se espera {rut}-{dv}-{trackid}' });
  if (!authorize(sim, e, t.token.rut, company))
    return jsonReply(ctx, 403, { codigo: 6, error: 'usuario sin permiso sobre la empresa' });
  const u = e.uploads.get(m[3]!.padStart(10, '0')) ?? e.uploads.get(m[3]!);
  if (!u || normalizeRut(u.rutCompany) !== company)
    return jsonReply(ctx, 404, { codigo: 105, error: 'trackid no existe o no pertenece a la empresa' });
  const state = uploadState(u, now, sim.options.timings);
  const shown = state === '-11' ? 'REC' : state;
  const body: Record<string, unknown> = {
    rut_emisor: u.rutCompany,
    rut_envia: u.rutSender,
    trackid: Number(u.trackId),
    fecha_recepcion: chileDateTime(u.receivedAt),
    estado: shown,
  };
  if (shown === u.verdict && u.verdict !== 'EPR') body.errores = u.errors;
  if (shown === 'EPR') {
    const byType = new Map<
      number,
      { informados: number; aceptados: number; rechazados: number; reparos: number }
    >();
    for (const d of u.documents) {
      const s = byType.get(d.tipoDte) ?? { informados: 0, aceptados: 0, rechazados: 0, reparos: 0 };
      s.informados++;
      if (d.result === 'RECHAZADO') s.rechazados++;
      else s.aceptados++;
      if (d.result === 'REPARO') s.reparos++;
      byType.set(d.tipoDte, s);
    }
    body.estadistica = [...byType.entries()].sort((a, b) => a[0] - b[0]).map(([tipo, s]) => ({ tipo, ...s }));
    // as the SII's boleta API shows it: a description per boleta and its findings in error[]
    // ({seccion, linea, nivel, codigo, descripcion, detalle})
    body.detalle_rep_rech = u.documents
      .filter((d) => d.result !== 'ACEPTADO')
      .map((d) => ({
        tipo: d.tipoDte,
        folio: d.folio,
        estado: RESULT_CODE[d.result],
        descripcion: d.result === 'RECHAZADO' ? 'Dte Rechazado' : 'Dte Aceptado con reparos',
        error:
          d.errors ??
          d.detail.map((m) => ({
            seccion: 'DTE',
            linea: 0,
            nivel: 3,
            codigo: 1,
            descripcion: m,
            detalle: '',
          })),
      }));
  }
  jsonReply(ctx, 200, body);
}

/**
 * One boleta's status (the REST counterpart of QueryEstDte, used to reconcile a send whose track
 * id is unknown): FAU until its send has a verdict, "RCH - DTE Rechazado" when rejected, DNK when
 * receiver, date or amount differ, DOK (with "RPR" in the glosa for objections) otherwise.
 */
async function documentoEstado(sim: Sim, env: SiiEnv, ctx: Context, id: string): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getEstDte')) return;
  const e = sim.state.env[env];
  const now = sim.state.now();
  const t = checkToken(e, cookieToken(ctx), now);
  if (!t.ok) return jsonReply(ctx, 401, { codigo: 5, error: `token ${t.reason}` });
  const m = /^(\d{1,9})-([0-9kK])-(\d+)-(\d+)$/.exec(id);
  const company = m ? joinRut(m[1]!, m[2]!) : null;
  const q = ctx.query as Record<string, string | undefined>;
  const receptor = joinRut(q.rut_receptor ?? '', q.dv_receptor ?? '');
  const fecha = /^(\d{2})-(\d{2})-(\d{4})$/.exec(q.fechaEmision ?? '');
  if (!m || !company || !receptor || !fecha || !/^\d+$/.test(q.monto ?? ''))
    return jsonReply(ctx, 400, { codigo: 1, error: 'parámetros incorrectos' });
  if (!authorize(sim, e, t.token.rut, company))
    return jsonReply(ctx, 403, { codigo: 6, error: 'usuario sin permiso sobre la empresa' });
  const answer = (estado: string, glosa: string) => jsonReply(ctx, 200, { estado, glosa });
  const d = e.documents.get(e.documentKey(company, Number(m[3]), Number(m[4])));
  const u = d ? e.uploads.get(d.trackId) : undefined;
  if (!d || !u || uploadState(u, now, sim.options.timings) !== u.verdict)
    return answer('FAU', 'DTE No Recibido');
  if (d.result === 'RECHAZADO') return answer('FAU', 'RCH - DTE Rechazado');
  if (
    d.rutReceptor !== receptor ||
    d.fchEmis !== `${fecha[3]}-${fecha[2]}-${fecha[1]}` ||
    d.mntTotal !== Number(q.monto)
  )
    return answer('DNK', 'DTE Recibido, datos no coinciden');
  answer('DOK', d.result === 'REPARO' ? 'RPR - Aceptado con Reparos' : 'DTE Recibido');
}
