/**
 * POST /cgi_dte/UPL/DTEUpload: multipart form (rutSender, dvSender, rutCompany, dvCompany,
 * archivo) with `Cookie: TOKEN=…`, answered by a RECEPCIONDTE document.
 *
 * STATUS, in the order checked: 5 no valid token; 1 the form's sender is not the token's user
 * or is not authorized for the company; 6 the company is not an enrolled electronic issuer in
 * this environment; 2 no file, empty or larger than the limit; 99 the same file was already
 * received (a repeated send: no TRACKID); 7 the file is not a readable EnvioDTE (not XML, or
 * another root element). Otherwise 0 with a TRACKID: every content check (schema, signatures,
 * Carátula, documents) is reported later by QueryEstUp, as the real SII does.
 */
import { createHash } from 'node:crypto';
import busboy from 'busboy';
import type { Context } from 'koa';
import { checkEnvelope, type CheckOutcome } from '../checks';
import { readEnvio, type ParsedEnvio } from '../engine';
import { chileDateTime } from '../chile-time';
import { applyFault, cookieToken, xmlReply } from '../http';
import { joinRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import { elements } from '../soap';
import type { UploadTrigger } from '../triggers';
import type { Company, DocumentRecord, SiiEnv, UploadRecord } from '../types';
import { readTotals } from './totals';

interface Form {
  fields: Record<string, string>;
  file?: { name: string; data: Buffer; truncated: boolean };
}

export function parseForm(ctx: Context, maxBytes: number): Promise<Form> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: ctx.req.headers, limits: { fileSize: maxBytes, files: 1 } });
    } catch (err) {
      reject(err);
      return;
    }
    const form: Form = { fields: {} };
    bb.on('field', (name, value) => {
      form.fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (name === 'archivo')
          form.file = {
            name: info.filename ?? 'archivo',
            data: Buffer.concat(chunks),
            truncated: (stream as unknown as { truncated?: boolean }).truncated === true,
          };
      });
    });
    bb.on('error', reject);
    bb.on('close', () => resolve(form));
    ctx.req.pipe(bb);
  });
}

/** XML text of the file: ISO-8859-1 when it says so (the SII's encoding), else UTF-8. */
export function decodeXmlFile(data: Buffer): string {
  const head = data.subarray(0, 200).toString('latin1');
  return /encoding\s*=\s*["']ISO-8859-1["']/i.test(head) ? data.toString('latin1') : data.toString('utf8');
}

export async function dteUpload(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'upload')) return;
  const e = sim.state.env[env];
  const now = sim.state.now();
  let form: Form;
  try {
    form = await parseForm(ctx, sim.options.maxUploadBytes);
  } catch (err) {
    ctx.status = 400;
    ctx.type = 'text/plain';
    ctx.body = `multipart/form-data expected: ${(err as Error).message}`;
    return;
  }
  const sender = joinRut(form.fields.rutSender ?? '', form.fields.dvSender ?? '');
  const company = joinRut(form.fields.rutCompany ?? '', form.fields.dvCompany ?? '');
  const reply = (status: number, trackId?: string) =>
    xmlReply(
      ctx,
      '<?xml version="1.0" encoding="UTF-8"?>\n<RECEPCIONDTE>' +
        elements([
          ['RUTSENDER', sender ?? `${form.fields.rutSender ?? ''}-${form.fields.dvSender ?? ''}`],
          ['RUTCOMPANY', company ?? `${form.fields.rutCompany ?? ''}-${form.fields.dvCompany ?? ''}`],
          ['FILE', form.file?.name ?? ''],
          ['TIMESTAMP', chileDateTime(now)],
          ['STATUS', status],
          ...(trackId ? ([['TRACKID', trackId]] as [string, string][]) : []),
        ]) +
        '</RECEPCIONDTE>',
    );

  const token = checkToken(e, cookieToken(ctx), now);
  if (!token.ok) return reply(5);
  if (!sender || sender !== token.token.rut) return reply(1);
  if (!company) return reply(6);
  if (!sim.options.autoEnrol && !e.companies.has(company)) return reply(6);
  if (!authorize(sim, e, sender, company)) return reply(1);
  if (!form.file || form.file.data.length === 0 || form.file.truncated) return reply(2);

  const file = form.file;
  await e.serialize(async () => {
    const trigger = sim.state.triggers.takeUploadTrigger(env);
    if (trigger?.kind === 'upload-status' && trigger.status !== 0) return reply(trigger.status);
    const sha256 = createHash('sha256').update(file.data).digest('hex');
    if (trigger?.kind === 'repeated' || e.uploadHashes.has(sha256)) return reply(99);

    const r = await receiveEnvioDte(sim, env, { sender, company, file, sha256, trigger, now });
    reply(r.status, r.trackId);
  });
}

/**
 * What DTEUpload does with a file it accepted for reading (token, sender, company, size and
 * repetition already checked): STATUS 7 when it is not a readable EnvioDTE, else every content
 * check (checks.ts) and the record of the upload under a new track id (STATUS 0).
 */
export async function receiveEnvioDte(
  sim: Sim,
  env: SiiEnv,
  r: {
    sender: string;
    company: string;
    file: { name: string; data: Buffer };
    sha256: string;
    trigger: UploadTrigger | undefined;
    now: number;
  },
): Promise<{ status: 0; trackId: string } | { status: 7; trackId?: undefined }> {
  const { sender, company, file, sha256, trigger, now } = r;
  const e = sim.state.env[env];
  const xml = decodeXmlFile(file.data);
  let parsed: ParsedEnvio;
  try {
    parsed = readEnvio(xml);
  } catch {
    return { status: 7 };
  }
  if (parsed.document.documentElement?.localName !== 'EnvioDTE') return { status: 7 };

  const c = e.companies.get(company)!;
  const adoptResolution = sim.options.autoEnrol && c.fchResol === '';
  const outcome: CheckOutcome = await checkEnvelope({
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
  });
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
  return { status: 0, trackId };
}

/**
 * Records an envelope that was received (DTEUpload or the boleta REST envío): a forced verdict of
 * its trigger applied, a new track id, its documents (with their totals when accepted) and the
 * upload; the folios it used; and, under auto-enrol, the company's resolution taken from the first
 * envelope that passes. Returns the track id.
 */
export function recordUpload(
  sim: Sim,
  env: SiiEnv,
  u: {
    sender: string;
    /** the form's company RUT, and its record */
    companyRut: string;
    company: Company;
    fileName: string;
    sha256: string;
    xml: string;
    /** `xml` read (readEnvio), shared with the checks so the envelope is read once */
    parsed: ParsedEnvio;
    /** the simulator clock's instant (ms) */
    now: number;
    outcome: CheckOutcome;
    trigger: UploadTrigger | undefined;
    adoptResolution: boolean;
  },
): string {
  const e = sim.state.env[env];
  const { outcome, trigger, now } = u;
  if (trigger?.kind === 'verdict') applyForcedVerdict(outcome, trigger.verdict);
  const trackId = e.newTrackId();
  const totals = outcome.verdict === 'EPR' ? readTotals(u.parsed) : new Map();
  const documents: DocumentRecord[] = outcome.documents.map((d) => ({
    env,
    trackId,
    tipoDte: d.tipoDte,
    folio: d.folio,
    rutEmisor: d.rutEmisor,
    rutReceptor: d.rutReceptor,
    fchEmis: d.fchEmis,
    mntTotal: d.mntTotal,
    ...totals.get(`${d.tipoDte}|${d.folio}`),
    result: d.result,
    detail: d.detail,
    errors: d.errors,
    receivedAt: now,
    events: [],
  }));
  const upload: UploadRecord = {
    env,
    trackId,
    rutSender: u.sender,
    rutCompany: u.companyRut,
    fileName: u.fileName,
    sha256: u.sha256,
    receivedAt: now,
    verdict: outcome.verdict,
    errors:
      outcome.verdict === 'EPR'
        ? outcome.documents.flatMap((d) => d.detail.map((m) => `${d.tipoDte}/${d.folio}: ${m}`))
        : outcome.errors,
    stuck: trigger?.kind === 'stuck',
    intermediates: intermediatesFor(sim.options.intermediateStates, outcome.verdict),
    documents,
  };
  e.uploads.set(trackId, upload);
  e.uploadHashes.set(u.sha256, trackId);
  outcome.documents.forEach((d, i) => {
    if (d.recordsFolio) e.documents.set(e.documentKey(d.rutEmisor, d.tipoDte, d.folio), documents[i]!);
  });
  if (u.adoptResolution && outcome.verdict === 'EPR') {
    // auto-enrol: the first envelope that passes the Carátula fixes the company's resolution
    const first = /<FchResol>([^<]+)<\/FchResol>\s*<NroResol>(\d+)<\/NroResol>/.exec(u.xml);
    if (first) {
      u.company.fchResol = first[1]!;
      u.company.nroResol = Number(first[2]);
    }
  }
  return trackId;
}

export function applyForcedVerdict(
  outcome: CheckOutcome,
  verdict: 'RSC' | 'RFR' | 'RCT' | 'RCO' | 'RPT' | 'VOF' | 'RCH' | 'RPR',
): void {
  if (verdict === 'RCH' || verdict === 'RPR') {
    if (outcome.verdict !== 'EPR') return;
    for (const d of outcome.documents) {
      if (d.result === 'RECHAZADO') continue;
      d.result = verdict === 'RCH' ? 'RECHAZADO' : 'REPARO';
      d.detail = [verdict === 'RCH' ? 'rechazo forzado por trigger' : 'reparo forzado por trigger'];
      d.errors = [
        {
          seccion: 'DTE',
          linea: 0,
          nivel: verdict === 'RCH' ? 3 : 2,
          codigo: verdict === 'RCH' ? 1 : 2,
          descripcion: d.detail[0]!,
          detalle: '',
        },
      ];
    }
    return;
  }
  outcome.verdict = verdict;
  outcome.errors = [`${verdict} forzado por trigger`];
  outcome.documents = [];
}

/** The states a send goes through before its verdict: a rejection stops at its check's stage. */
export function intermediatesFor(all: string[], verdict: string): string[] {
  const stopAt: Record<string, string> = { RSC: 'SOK', RFR: 'FOK', RCT: 'CRT' };
  const stop = stopAt[verdict];
  if (!stop) return all;
  const idx = all.indexOf(stop);
  return idx < 0 ? all.filter((s) => s === 'REC') : all.slice(0, idx);
}
