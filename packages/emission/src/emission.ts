import { randomUUID } from 'node:crypto';
import {
  buildDocument,
  computeTotals,
  needsExchangeRate,
  normalizeRut,
  validateEmissionDraft,
  type EmissionInput,
  type Totals,
  type ValidatedEmission,
} from '@dte/engine';
import { DataSource, type EntityManager } from 'typeorm';
import { chooseSigningCertificate, type CertificateRow } from '@dte/certificates';
import { type Principal, productionIssueGate } from '@dte/tenancy';
import { ApiError } from '@dte/error-catalog';
import type { BacklogGate } from './backlog-gate';
import { bodyHash } from './canonical-json';
import {
  loadCompanyProfile,
  loadCompanyWithCertificates,
  preloadedCompanyWithCertificates,
  type CompanyProfile,
} from './company-profile';
import { emissionRefused, writeWithFolio, type NewDocument } from './folio-write';
import { idempotencyKeyOf, issueOrReplay } from './idempotency';
import { enforceReferenceRules, lockReferenced, taxReferences, type RuleCodes } from './note-rules';
import type { DteRow } from './dte-row';
import type { ExchangeRateSource } from './exchange-rate';

export interface EmissionRequest {
  body: unknown;
  idempotencyKey: string | undefined;
  certIdHeader: string | undefined;
  /** the HTTP request's X-Request-Id, carried to the pipeline as a Kafka header */
  requestId?: string;
}

export interface EmissionResult {
  row: DteRow;
  /** false when the key had already created this document */
  created: boolean;
}

/**
 * The checks of POST /dtes that come before the signing certificate and the folio, shared with
 * POST /dtes/preview (the same validation and totals, no second copy): sii_env as confirmation,
 * the engine's validation, rut_emisor against the key's company, the production gates and
 * resolution. (The exchange rate of an export is `exchangeRateFor`, after the certificate.)
 * `withCertificates`: also the company's current certificates (for chooseSigningCertificate),
 * read in the statement that reads the company.
 */
export async function validateForEmission(
  db: DataSource,
  principal: Principal & { companyId: string },
  reqBody: unknown,
  now: Date,
  withCertificates = false,
): Promise<{
  company: CompanyProfile;
  input: EmissionInput;
  validated: ValidatedEmission;
  certificates: CertificateRow[];
}> {
  const body = reqBody as Record<string, unknown> | undefined;
  const solicitado = body && typeof body === 'object' ? body.sii_env : undefined;
  if ((solicitado === 'cert' || solicitado === 'prod') && solicitado !== principal.environment) {
    throw new ApiError(
      'dte.sii_env_credential_mismatch',
      `The body asks for sii_env ${solicitado} but the API key is for ${principal.environment}.`,
      { detail: { solicitado, credencial: principal.environment } },
    );
  }

  const { company, certificates } = withCertificates
    ? (preloadedCompanyWithCertificates(principal.preloaded) ??
      (await loadCompanyWithCertificates(db, principal.organizationId, principal.companyId)))
    : {
        company: await loadCompanyProfile(db, principal.organizationId, principal.companyId),
        certificates: [],
      };
  const typeGate = await productionIssueGate(db, principal.environment, company.id);
  const validated = validateEmissionDraft(reqBody, { now, emisor: company.emisor });
  const { input } = validated;
  if (input.rut_emisor !== undefined && normalizeRut(input.rut_emisor) !== normalizeRut(company.rut)) {
    throw new ApiError(
      'emisor_rut_mismatch',
      `rut_emisor ${input.rut_emisor} is not the company of this API key.`,
      {
        detail: { rut_emisor: input.rut_emisor, expected: company.rut },
      },
    );
  }
  typeGate(input.tipo_dte);
  if (principal.environment === 'prod' && !company.resolucion.prod) {
    throw new ApiError(
      'dte.production_resolucion_missing',
      'The company has no production SII resolution (number and date) on record; capture it before issuing in production.',
    );
  }
  return { company, input, validated, certificates };
}

/**
 * Exports without otra_moneda: the exchange rate, fetched before the transaction (no folio is
 * held while waiting on the network); without a source, buildDocument raises
 * tipo_cambio_unavailable.
 */
export async function exchangeRateFor(
  input: EmissionInput,
  opts: { rates?: ExchangeRateSource },
): Promise<{ exchangeRate?: number }> {
  if (!needsExchangeRate(input) || !opts.rates) return {};
  return {
    exchangeRate: await opts.rates.rate((input as { tpo_moneda: string }).tpo_moneda, input.fecha_emision),
  };
}

/**
 * The document's totals as emission stores them (CLP columns of `dtes`), from the engine
 * (`totals`: computeTotals(input, rateOpt) already at hand).
 */
export function emissionTotals(
  input: EmissionInput,
  rateOpt: { exchangeRate?: number },
  totals: Totals = computeTotals(input, rateOpt),
) {
  const clp = totals.clp ?? {
    montoNeto: totals.montoNeto ?? 0,
    montoExento: totals.montoExento ?? 0,
    iva: totals.iva ?? 0,
    montoTotal: totals.montoTotal,
  };
  return { totals, clp };
}

/**
 * POST /dtes. Order of checks: Idempotency-Key present; a key already used answers from the
 * stored document (same body) or idempotency_conflict (another body) whatever else this attempt
 * meets, so a retry gets the original even if rules or the clock moved (the key is looked up only
 * when the attempt fails: by the key's unique index or by any catalog error); sii_env as
 * confirmation; the engine's validation (in production after the organization's gate,
 * onboarding_production_not_authorized);
 * rut_emisor against the key's company; in production, the type's gate (dte.type.prod_not_certified)
 * and the company's SII resolution (dte.production_resolucion_missing); the signing certificate
 * (X-Cert-Id rules); backpressure (backlog-gate.ts: 503 sii_unavailable when the company's
 * unsent backlog is above the bound).
 * Then, in ONE transaction: apply the rules of references to our own documents (note-rules.ts,
 * serialized per referenced document; derive passes ruleCodes 'derive' for its own codes), take
 * the folio (THE allocator), build the document, and insert it with its first feed row and the
 * dte.commands and dte-status `queued` outbox rows in one statement. A used key (a retry, or two
 * requests racing): the key's unique index lets one insert; the other's statement writes nothing
 * (its folio included) and it replays that document (or idempotency_conflict). Any failure rolls
 * the folio back. Statements of a new emission: the API key, the company with its certificates,
 * the write.
 */
export async function emitDte(
  db: DataSource,
  principal: Principal,
  req: EmissionRequest,
  now: Date,
  opts: { rates?: ExchangeRateSource; ruleCodes?: RuleCodes; backlog?: BacklogGate } = {},
): Promise<EmissionResult> {
  const key = idempotencyKeyOf(req.idempotencyKey);
  // an API key issues for its company; a dashboard session for the organization's company named
  // by rut_emisor (or its only company)
  const companyId = principal.companyId ?? (await sessionCompanyId(db, principal.organizationId, req.body));
  const scoped = { ...principal, companyId };
  const hash = bodyHash(req.body);
  return issueOrReplay(
    db,
    scoped,
    key,
    hash,
    () => issueNew(db, scoped, { ...req, idempotencyKey: key }, hash, now, opts),
    (known) => ({ row: known, created: false }),
  );
}

/** POST /dtes for a key not used yet (emitDte decides what a used key answers). */
async function issueNew(
  db: DataSource,
  principal: Principal & { companyId: string },
  req: EmissionRequest & { idempotencyKey: string },
  hash: string,
  now: Date,
  opts: { rates?: ExchangeRateSource; ruleCodes?: RuleCodes; backlog?: BacklogGate },
): Promise<EmissionResult> {
  const { company, input, validated, certificates } = await validateForEmission(
    db,
    principal,
    req.body,
    now,
    true,
  );
  const certId =
    req.certIdHeader?.trim() || (typeof input.certificate_id === 'string' ? input.certificate_id : undefined);
  // the X-Cert-Id rules over the certificates read with the company (no statement of its own)
  const cert = chooseSigningCertificate(certificates, certId, { path: 'dte', now });
  // backpressure: above the company's unsent backlog, 503 sii_unavailable before any folio
  await opts.backlog?.admit(db, { companyId: principal.companyId, environment: principal.environment });
  const rateOpt = await exchangeRateFor(input, opts);
  // the document and its amounts are built first (folio 0): the database sets the folio in the
  // statement that takes it
  // without an exchange rate in its amounts, that draft and its totals are validation's dry run
  const dryRun = !needsExchangeRate(input);
  const draft = dryRun
    ? validated.draft
    : buildDocument(input, { emisor: company.emisor, folio: 0, ...rateOpt });
  const { clp } = emissionTotals(input, rateOpt, dryRun ? validated.totals : undefined);
  const receptor = (input as { receptor: { rut?: string; razon_social: string } }).receptor;
  const folioKey = {
    organizationId: principal.organizationId,
    companyId: company.id,
    environment: principal.environment,
    tipoDte: input.tipo_dte,
  };
  const doc: NewDocument = {
    id: randomUUID(),
    organizationId: principal.organizationId,
    companyId: company.id,
    environment: principal.environment,
    tipoDte: input.tipo_dte,
    certificateId: cert.id,
    rutEmisor: company.rut,
    rutReceptor: receptor.rut ? normalizeRut(receptor.rut) : null,
    razonSocialReceptor: receptor.razon_social,
    fechaEmision: input.fecha_emision,
    amounts: { neto: clp.montoNeto, exento: clp.montoExento, iva: clp.iva, total: clp.montoTotal },
    input: req.body,
    idempotencyKey: req.idempotencyKey,
    bodyHash: hash,
    ...(req.requestId ? { requestId: req.requestId } : {}),
    now,
  };
  // the folio, the document, its feed row and outbox rows in one statement (folio-write.ts)
  const write = async (q: DataSource | EntityManager): Promise<DteRow> =>
    (await writeWithFolio(q, doc, draft)) ?? emissionRefused(q, folioKey, now);

  const row =
    taxReferences(input).length === 0
      ? await write(db)
      : // notes over our own documents, guías (note-rules.ts): serialized per referenced
        // document and refused before the folio is taken, in one transaction with the write
        await db.transaction(async (m) => {
          await lockReferenced(m, folioKey, input);
          await enforceReferenceRules(m, folioKey, input, opts.ruleCodes ?? 'emission');
          return write(m);
        });
  return { row, created: true };
}

/** The company a dashboard session issues for: rut_emisor among the organization's, or its only one. */
async function sessionCompanyId(db: DataSource, organizationId: string, body: unknown): Promise<string> {
  const rut = body && typeof body === 'object' ? (body as { rut_emisor?: unknown }).rut_emisor : undefined;
  const wanted = typeof rut === 'string' ? normalizeRut(rut) : null;
  const rows: { id: string; rut: string }[] = await db.query(
    'SELECT id, rut FROM companies WHERE organization_id = $1 ORDER BY created_at, id',
    [organizationId],
  );
  const match = wanted ? rows.filter((r) => normalizeRut(r.rut) === wanted) : rows;
  if (match.length !== 1) {
    throw new ApiError(
      'empresa.not_found',
      wanted
        ? `No company ${wanted} in this organization.`
        : 'Say rut_emisor: the organization has several companies (or none).',
    );
  }
  return match[0].id;
}
