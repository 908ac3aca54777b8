import { createHash } from 'node:crypto';
import { buildDocument } from '@dte/engine';
import {
  CEDIBLE_LABEL,
  CEDIBLE_TIPOS_TEXT,
  renderDraft,
  renderSignedDte,
  zipFiles,
  type PrintCopy,
  type PrintLayout,
} from '@dte/printed-form';
import { isServiceError, ApiError } from '@dte/error-catalog';
import type { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import type { DataSource } from 'typeorm';
import type { EmissionConfig } from './deps';
import type { Principal } from '@dte/tenancy';
import type { DteScope } from './dte-row';
import { emissionTotals, exchangeRateFor, validateForEmission } from './emission';
import type { ExchangeRateSource } from './exchange-rate';
import { dteLinks } from './records';
import { getDteOr404 } from './reads';

export interface PrintQuery {
  copy: PrintCopy;
  layout: PrintLayout;
}

const COPIES: readonly PrintCopy[] = ['original', 'cedible'];
const LAYOUTS: readonly PrintLayout[] = ['letter', 'thermal'];

/** `copy` (original | cedible) and `layout` (letter | thermal) of the printed-form routes. */
export function parsePrintQuery(q: Record<string, unknown>): PrintQuery {
  const copy = q.copy === undefined ? 'original' : String(q.copy);
  const layout = q.layout === undefined ? 'letter' : String(q.layout);
  const issues = [
    ...(COPIES.includes(copy as PrintCopy) ? [] : [{ path: 'copy', message: 'must be original or cedible' }]),
    ...(LAYOUTS.includes(layout as PrintLayout)
      ? []
      : [{ path: 'layout', message: 'must be letter or thermal' }]),
  ];
  if (issues.length) throw new ApiError('validation_failed', 'Invalid print query.', { issues });
  return { copy: copy as PrintCopy, layout: layout as PrintLayout };
}

interface CompanyPrintData {
  oficinaSii: string;
  resolucion: { numero: number; fecha: string } | null;
}

/**
 * What the printed form takes from the company register: the SII office ("S.I.I. - <oficina>",
 * the company's comuna until `sii_oficina` is captured) and the resolution of the environment.
 */
async function companyPrintData(
  db: DataSource,
  companyId: string,
  env: 'cert' | 'prod',
): Promise<CompanyPrintData> {
  const rows: {
    sii_oficina: string | null;
    comuna: string | null;
    numero: number | null;
    fecha: string | null;
  }[] = await db.query(
    `SELECT sii_oficina, comuna, resolucion_${env}_numero AS numero,
            to_char(resolucion_${env}_fecha, 'YYYY-MM-DD') AS fecha
       FROM companies WHERE id = $1`,
    [companyId],
  );
  const c = rows[0];
  return {
    oficinaSii: (c?.sii_oficina ?? c?.comuna ?? '').toUpperCase(),
    resolucion: c && c.numero !== null && c.fecha !== null ? { numero: c.numero, fecha: c.fecha } : null,
  };
}

/** Rendered PDFs are kept in Redis by document, signed-XML hash, company data and options. */
const CACHE_TTL_SEC = 7 * 24 * 3600;

async function cachedRender(
  redis: Redis,
  id: string,
  signedXml: string,
  company: CompanyPrintData,
  q: PrintQuery,
): Promise<{ pdf: Buffer; cached: boolean }> {
  const hash = createHash('sha256')
    .update(signedXml)
    .update(JSON.stringify([company, q.copy, q.layout]))
    .digest('hex')
    .slice(0, 32);
  const key = `dte-pdf:v1:${id}:${hash}`;
  const hit = await redis.getBuffer(key).catch(() => null);
  if (hit) return { pdf: hit, cached: true };
  const pdf = await renderSignedDte(signedXml, { ...company, copy: q.copy, layout: q.layout });
  await redis.set(key, pdf, 'EX', CACHE_TTL_SEC).catch(() => undefined);
  return { pdf, cached: false };
}

/**
 * 409 dte.pdf.not_signed: the spec's body carries `xml_url` (at the top level; detail keeps it
 * too). Raised by the PDF route and by resend-delivery.
 */
export function notSigned(id: string, message: string): ApiError {
  const xml_url = dteLinks(id).xml;
  return new ApiError('dte.pdf.not_signed', message, { detail: { xml_url }, bodyFields: { xml_url } });
}

/**
 * GET /dtes/:id/pdf: the printed form of a signed document, rendered from its stored XML.
 * Not signed yet: 409 dte.pdf.not_signed with xml_url.
 */
export async function dtePdf(
  db: DataSource,
  redis: Redis,
  scope: DteScope,
  id: string,
  q: PrintQuery,
): Promise<{ pdf: Buffer; cached: boolean; filename: string }> {
  const row = await getDteOr404(db, scope, id);
  const rows: { signed_xml: string | null }[] = await db.query('SELECT signed_xml FROM dtes WHERE id = $1', [
    id,
  ]);
  const xml = rows[0]?.signed_xml;
  if (!xml) {
    throw notSigned(id, 'The document is not signed yet; its printed form follows its XML.');
  }
  if (q.copy === 'cedible' && !CEDIBLE_LABEL[row.tipo_dte]) {
    throw new ApiError('validation_failed', `Type ${row.tipo_dte} has no CEDIBLE copy.`, {
      issues: [{ path: 'copy', message: `cedible applies to types ${CEDIBLE_TIPOS_TEXT}` }],
    });
  }
  const company = await companyPrintData(db, row.company_id, row.sii_env);
  const out = await cachedRender(redis, id, xml, company, q);
  return {
    ...out,
    filename: `dte-${row.tipo_dte}-${row.folio}${q.copy === 'cedible' ? '-cedible' : ''}.pdf`,
  };
}

/** Types POST /dtes/preview accepts (spec). */
export const PREVIEW_TIPOS = [33, 34, 46, 52, 56, 61];

export interface PreviewResult {
  tipo_dte: number;
  monto_neto: number;
  monto_exento: number;
  iva: number;
  monto_total: number;
  /** exports only: the document's currency and its amounts */
  moneda?: { tpo_moneda: string; monto_total: number };
}

/**
 * POST /dtes/preview: the emission's own validation and totals (validateForEmission,
 * emissionTotals, buildDocument), no certificate, no folio, nothing written.
 */
export async function previewDte(
  db: DataSource,
  principal: Principal,
  body: unknown,
  now: Date,
  opts: { rates?: ExchangeRateSource; layout: PrintLayout; wantPdf: boolean },
): Promise<{ totals: PreviewResult; pdf?: Buffer }> {
  const tipo = body && typeof body === 'object' ? (body as { tipo_dte?: unknown }).tipo_dte : undefined;
  if (typeof tipo === 'number' && !PREVIEW_TIPOS.includes(tipo)) {
    throw new ApiError(
      'dte.preview.unsupported_tipo',
      `Preview covers types ${PREVIEW_TIPOS.join(', ')}; not ${tipo}.`,
      {
        detail: { tipo_dte: tipo, supported: PREVIEW_TIPOS },
      },
    );
  }
  if (!principal.companyId) throw new ApiError('forbidden', 'Preview needs an API key of a company.');
  const { company, input } = await validateForEmission(
    db,
    { ...principal, companyId: principal.companyId },
    body,
    now,
  );
  if (!PREVIEW_TIPOS.includes(input.tipo_dte)) {
    throw new ApiError('dte.preview.unsupported_tipo', `Preview covers types ${PREVIEW_TIPOS.join(', ')}.`, {
      detail: { tipo_dte: input.tipo_dte, supported: PREVIEW_TIPOS },
    });
  }
  const rateOpt = await exchangeRateFor(input, opts);
  const { clp } = emissionTotals(input, rateOpt);
  const totals: PreviewResult = {
    tipo_dte: input.tipo_dte,
    monto_neto: Math.round(clp.montoNeto),
    monto_exento: Math.round(clp.montoExento),
    iva: Math.round(clp.iva),
    monto_total: Math.round(clp.montoTotal),
  };
  if (!opts.wantPdf) return { totals };
  // folio 1 only satisfies the model's shape; the draft prints no folio
  const document = buildDocument(input, { emisor: company.emisor, folio: 1, ...rateOpt });
  const printData = await companyPrintData(db, company.id, principal.environment);
  const pdf = await renderDraft(document, { ...printData, layout: opts.layout });
  return { totals, pdf };
}

/** The certification types whose sample prints the SII asks for. */
export const MUESTRAS_TIPOS = [33, 34, 56, 61];

/**
 * The signed certification documents of 33/34/56/61 of the caller (its company for an API key),
 * by type and folio; `set_pruebas` keeps the documents of the SII's test set: those whose
 * reference is the set (TpoDocRef SET) or names one of its cases (RazonRef "CASO <n>-<m>", the
 * SII's numbering of the set's cases).
 */
async function muestrasDocuments(
  db: DataSource,
  principal: Principal,
  source: 'all' | 'set_pruebas',
): Promise<{ docs: { id: string; tipo_dte: number; folio: string; company_id: string }[]; total: number }> {
  // ids only (each signed XML is read when its PDF is rendered), the first MUESTRAS_MAX_DOCUMENTOS
  const rows: { id: string; tipo_dte: number; folio: string; company_id: string; total: number }[] =
    await db.query(
      `SELECT id, tipo_dte, folio, company_id, count(*) OVER ()::int AS total FROM dtes
        WHERE organization_id = $1 AND sii_env = 'cert' AND tipo_dte = ANY($2::int[])
          AND signed_xml IS NOT NULL
          AND ($3::uuid IS NULL OR company_id = $3)
          AND ($4 = 'all' OR signed_xml ~ '<TpoDocRef>SET</TpoDocRef>|<RazonRef>CASO [0-9]+-[0-9]+')
        ORDER BY tipo_dte, folio
        LIMIT $5`,
      [principal.organizationId, MUESTRAS_TIPOS, principal.companyId, source, MUESTRAS_MAX_DOCUMENTOS],
    );
  return { docs: rows, total: rows[0]?.total ?? 0 };
}

/**
 * Bounds of one sample-print batch (GET /dtes/muestras, POST /dtes/muestras/send): at most
 * MUESTRAS_MAX_DOCUMENTOS PDFs (the SII's certification set is a few dozen cases; the GET names
 * the total in X-Muestras-Total when there are more, the mail refuses them), rendered one at a
 * time yielding to the event loop between PDFs, at most MUESTRAS_BUILDS.process batches at once in
 * the process and MUESTRAS_BUILDS.organization per organization; one more answers 429 rate_limit.
 */
export const MUESTRAS_MAX_DOCUMENTOS = 60;
export const MUESTRAS_BUILDS = { process: 2, organization: 1 } as const;
const muestrasBuilds = { total: 0, byOrg: new Map<string, number>() };

async function withMuestrasSlot<T>(orgId: string, f: () => Promise<T>): Promise<T> {
  const mine = muestrasBuilds.byOrg.get(orgId) ?? 0;
  if (muestrasBuilds.total >= MUESTRAS_BUILDS.process || mine >= MUESTRAS_BUILDS.organization) {
    throw new ApiError(
      'rate_limit',
      mine >= MUESTRAS_BUILDS.organization
        ? 'The sample prints of this organization are being built already; try again when that one ends.'
        : 'Sample prints are being built for other organizations; try again shortly.',
      { detail: { retryAfterSec: 10 } },
    );
  }
  muestrasBuilds.total += 1;
  muestrasBuilds.byOrg.set(orgId, mine + 1);
  try {
    return await f();
  } finally {
    muestrasBuilds.total -= 1;
    const left = (muestrasBuilds.byOrg.get(orgId) ?? 1) - 1;
    if (left > 0) muestrasBuilds.byOrg.set(orgId, left);
    else muestrasBuilds.byOrg.delete(orgId);
  }
}

export function parseMuestrasSource(q: Record<string, unknown>): 'all' | 'set_pruebas' {
  if (q.source === undefined) return 'all';
  if (q.source === 'set_pruebas') return 'set_pruebas';
  throw new ApiError('validation_failed', 'Invalid source.', {
    issues: [{ path: 'source', message: 'must be set_pruebas' }],
  });
}

/**
 * One PDF (the original copy, letter) per signed certification 33/34/56/61, as files; a document
 * the printed form refuses (dte.print.items_limit, dte.print.overflow) is left out and named in
 * `omitted` rather than failing the whole batch.
 */
async function muestrasPdfs(
  db: DataSource,
  redis: Redis,
  principal: Principal,
  source: 'all' | 'set_pruebas',
): Promise<{
  files: { name: string; data: Buffer }[];
  omitted: { name: string; code: string }[];
  total: number;
}> {
  return withMuestrasSlot(principal.organizationId, async () => {
    const { docs, total } = await muestrasDocuments(db, principal, source);
    const files: { name: string; data: Buffer }[] = [];
    const omitted: { name: string; code: string }[] = [];
    const companies = new Map<string, CompanyPrintData>();
    for (const d of docs) {
      let company = companies.get(d.company_id);
      if (!company) {
        company = await companyPrintData(db, d.company_id, 'cert');
        companies.set(d.company_id, company);
      }
      const name = `${d.tipo_dte}-${d.folio}.pdf`;
      const [{ signed_xml }]: { signed_xml: string }[] = await db.query(
        'SELECT signed_xml FROM dtes WHERE id = $1',
        [d.id],
      );
      try {
        const { pdf } = await cachedRender(redis, d.id, signed_xml, company, {
          copy: 'original',
          layout: 'letter',
        });
        files.push({ name, data: pdf });
      } catch (err) {
        if (!isServiceError(err) || !err.code.startsWith('dte.print.')) throw err;
        omitted.push({ name, code: err.code });
      }
      // one PDF at a time, and the other requests served between them
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return { files, omitted, total };
  });
}

/** GET /dtes/muestras: the ZIP of sample prints, or dte.muestras.empty. */
export async function muestrasZip(
  db: DataSource,
  redis: Redis,
  principal: Principal,
  source: 'all' | 'set_pruebas',
): Promise<{ zip: Buffer; omitted: { name: string; code: string }[]; total: number }> {
  const { files, omitted, total } = await muestrasPdfs(db, redis, principal, source);
  if (files.length === 0) {
    throw new ApiError(
      'dte.muestras.empty',
      'No printable signed certification documents of types 33, 34, 56 or 61.',
      omitted.length ? { detail: { omitted } } : {},
    );
  }
  return { zip: await zipFiles(files), omitted, total };
}

/** The SII's limit on one sample-print mail (spec, Limits). */
export const MUESTRAS_MAX_BYTES = 3 * 1024 * 1024;

/**
 * POST /dtes/muestras/send: mails the sample PDFs to the SII's sample mailbox over SMTP (one
 * message, the PDFs attached); over 3 MB answers dte.muestras.too_large and sends nothing.
 */
export async function sendMuestras(
  db: DataSource,
  redis: Redis,
  config: Pick<EmissionConfig, 'smtpUrl' | 'mailFrom' | 'muestrasMailTo'>,
  principal: Principal,
  source: 'all' | 'set_pruebas',
  now: () => Date,
): Promise<{ sent: number; sentAt: string }> {
  if (!config.smtpUrl || !config.muestrasMailTo) {
    throw new ApiError(
      'dte.muestras.send_not_configured',
      'No mail sender configured (SMTP_URL and MUESTRAS_MAIL_TO).',
    );
  }
  const { files, total } = await muestrasPdfs(db, redis, principal, source);
  if (total > MUESTRAS_MAX_DOCUMENTOS) {
    throw new ApiError(
      'dte.muestras.too_large',
      `There are ${total} signed certification documents; one mail holds at most ${MUESTRAS_MAX_DOCUMENTOS} (send source=set_pruebas).`,
      { detail: { documentos: total, max: MUESTRAS_MAX_DOCUMENTOS } },
    );
  }
  if (files.length === 0) {
    throw new ApiError(
      'dte.muestras.no_samples',
      'No signed certification documents of types 33, 34, 56 or 61 yet.',
    );
  }
  const size = files.reduce((n, f) => n + f.data.length, 0);
  if (size > MUESTRAS_MAX_BYTES) {
    throw new ApiError(
      'dte.muestras.too_large',
      `The sample prints weigh ${size} bytes; one mail holds at most 3 MB.`,
      {
        detail: { bytes: size, max: MUESTRAS_MAX_BYTES, files: files.length },
      },
    );
  }
  const companies: { rut: string; razon_social: string }[] = principal.companyId
    ? await db.query('SELECT rut, razon_social FROM companies WHERE id = $1', [principal.companyId])
    : [];
  const who = companies[0] ? `${companies[0].razon_social} (${companies[0].rut})` : 'the organization';
  const transport = nodemailer.createTransport(config.smtpUrl);
  try {
    await transport.sendMail({
      from: config.mailFrom,
      to: config.muestrasMailTo,
      subject: `Muestras impresas ${who}`,
      text: `Muestras impresas de ${who}: ${files.length} documento(s) en PDF adjuntos.`,
      attachments: files.map((f) => ({ filename: f.name, content: f.data, contentType: 'application/pdf' })),
    });
  } catch (err) {
    throw new ApiError(
      'dte.muestras.not_sent',
      `The mail server refused the sample prints: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  } finally {
    transport.close();
  }
  return { sent: files.length, sentAt: now().toISOString() };
}
