import { randomUUID } from 'node:crypto';
import {
  buildDocument,
  computeTotals,
  needsExchangeRate,
  normalizeRut,
  validateEmission,
  type EmissionInput,
} from '@dte/engine';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS } from '@dte/messaging';
import type { DataSource } from 'typeorm';
import { allocateFolio } from '../caf/folio-allocator';
import { resolveSigningCertificate } from '../certificates/certificates';
import type { Principal } from '../context';
import { ApiError } from '../http/api-error';
import { enqueueOutbox } from '../outbox/enqueue';
import type { BacklogGate } from './backlog-gate';
import { bodyHash } from './canonical-json';
import { productionIssueGate } from '../production-gates';
import { loadCompanyProfile, type CompanyProfile } from './company-profile';
import { documentByIdempotencyKey, idempotencyLockName, replayOrConflict } from './idempotency';
import { enforceReferenceRules, lockReferenced, type RuleCodes } from './note-rules';
import { DTE_COLUMNS, type DteRow } from './dte-row';
import type { ExchangeRateSource } from './exchange-rate';
import { statusOutboxEntry } from './status-record';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

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

function replay(existing: DteRow, hash: string): EmissionResult {
  return { row: replayOrConflict(existing, hash), created: false };
}

/**
 * The checks of POST /dtes that come before the signing certificate and the folio, shared with
 * POST /dtes/preview (the same validation and totals, no second copy): sii_env as confirmation,
 * the engine's validation, rut_emisor against the key's company, the production gates and
 * resolution. (The exchange rate of an export is `exchangeRateFor`, after the certificate.)
 */
export async function validateForEmission(
  db: DataSource,
  principal: Principal & { companyId: string },
  reqBody: unknown,
  now: Date,
): Promise<{ company: CompanyProfile; input: EmissionInput }> {
  const body = reqBody as Record<string, unknown> | undefined;
  const solicitado = body && typeof body === 'object' ? body.sii_env : undefined;
  if ((solicitado === 'cert' || solicitado === 'prod') && solicitado !== principal.environment) {
    throw new ApiError(
      'dte.sii_env_credential_mismatch',
      `The body asks for sii_env ${solicitado} but the API key is for ${principal.environment}.`,
      { detail: { solicitado, credencial: principal.environment } },
    );
  }

  const company = await loadCompanyProfile(db, principal.organizationId, principal.companyId);
  const typeGate = await productionIssueGate(db, principal.environment, company.id);
  const input: EmissionInput = validateEmission(reqBody, { now, emisor: company.emisor });
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
  return { company, input };
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

/** The document's totals as emission stores them (CLP columns of `dtes`), from the engine. */
export function emissionTotals(input: EmissionInput, rateOpt: { exchangeRate?: number }) {
  const totals = computeTotals(input, rateOpt);
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
 * stored document (same body) or idempotency_conflict (another body) before anything else, so a
 * retry gets the original even if rules or the clock moved; sii_env as confirmation; the engine's
 * validation (in production after the organization's gate, onboarding_production_not_authorized);
 * rut_emisor against the key's company; in production, the type's gate (dte.type.prod_not_certified)
 * and the company's SII resolution (dte.production_resolucion_missing); the signing certificate
 * (X-Cert-Id rules); backpressure (backlog-gate.ts: 503 sii_unavailable when the company's
 * unsent backlog is above the bound).
 * Then, in ONE transaction serialized per (company, environment, key) by an advisory lock: re-check
 * the key, apply the rules of references to our own documents (note-rules.ts, serialized per
 * referenced document; derive passes ruleCodes 'derive' for its own codes), take the folio (THE
 * allocator), build the document, insert it with the dte.commands and
 * dte-status `queued` outbox rows and the first feed row. A failure rolls the folio back.
 */
export async function emitDte(
  db: DataSource,
  principal: Principal,
  req: EmissionRequest,
  now: Date,
  opts: { rates?: ExchangeRateSource; ruleCodes?: RuleCodes; backlog?: BacklogGate } = {},
): Promise<EmissionResult> {
  const key = req.idempotencyKey?.trim();
  if (!key) {
    throw new ApiError('idempotency_key_missing', 'Send an Idempotency-Key header with every emission.');
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ApiError('validation_failed', 'Idempotency-Key is too long.', {
      issues: [
        { path: 'Idempotency-Key', message: `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` },
      ],
    });
  }
  // an API key issues for its company; a dashboard session for the organization's company named
  // by rut_emisor (or its only company)
  const companyId = principal.companyId ?? (await sessionCompanyId(db, principal.organizationId, req.body));
  const scoped = { ...principal, companyId };
  const hash = bodyHash(req.body);
  const known = await documentByIdempotencyKey(db, scoped, key);
  if (known) return replay(known, hash);

  const { company, input } = await validateForEmission(db, scoped, req.body, now);
  const certId =
    req.certIdHeader?.trim() || (typeof input.certificate_id === 'string' ? input.certificate_id : undefined);
  const cert = await resolveSigningCertificate(db, principal.organizationId, certId, {
    path: 'dte',
    now,
    companyId,
  });
  // backpressure: above the company's unsent backlog, 503 sii_unavailable before any folio
  await opts.backlog?.admit(db, { companyId, environment: principal.environment });
  const rateOpt = await exchangeRateFor(input, opts);

  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [idempotencyLockName(scoped, key)]);
    const raced = await documentByIdempotencyKey(m, scoped, key);
    if (raced) return replay(raced, hash);
    // notes over our own documents, guías (note-rules.ts): refused before the folio is taken
    const refScope = {
      organizationId: principal.organizationId,
      companyId: company.id,
      environment: principal.environment,
    };
    await lockReferenced(m, refScope, input);
    await enforceReferenceRules(m, refScope, input, opts.ruleCodes ?? 'emission');

    const { folio, cafId } = await allocateFolio(
      m,
      {
        organizationId: principal.organizationId,
        companyId: company.id,
        environment: principal.environment,
        tipoDte: input.tipo_dte,
      },
      now,
    );
    const document = buildDocument(input, { emisor: company.emisor, folio, ...rateOpt });
    const { clp } = emissionTotals(input, rateOpt);
    const id = randomUUID();
    const receptor = (input as { receptor: { rut?: string; razon_social: string } }).receptor;
    const doc = {
      id,
      organizationId: principal.organizationId,
      siiEnv: principal.environment,
      tipoDte: input.tipo_dte,
      folio,
    };
    const queued = statusOutboxEntry(doc, { siiStatus: 'queued', observedAt: now });
    // one statement: the document and its first feed row (the feed shows `queued` at once; the
    // projector's later copy of the same event is a no-op)
    const rows: DteRow[] = await m.query(
      `WITH d AS (
       INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
           rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
           monto_total, input, document, sii_status, observed_at, idempotency_key, body_hash, created_at, request_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
           'queued', $19, $20, $21, $19, $23)
       RETURNING ${DTE_COLUMNS}),
       e AS (
         INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
         SELECT $1, $22, 'queued', NULL, NULL, 'api', $19 FROM d)
       SELECT * FROM d`,
      [
        id,
        principal.organizationId,
        company.id,
        principal.environment,
        input.tipo_dte,
        folio,
        cafId,
        cert.id,
        company.rut,
        receptor.rut ? normalizeRut(receptor.rut) : null,
        receptor.razon_social,
        input.fecha_emision,
        Math.round(clp.montoNeto),
        Math.round(clp.montoExento),
        Math.round(clp.iva),
        Math.round(clp.montoTotal),
        JSON.stringify(req.body),
        JSON.stringify(document),
        now,
        key,
        hash,
        queued.payload.event_id,
        req.requestId ?? null,
      ],
    );
    const correlation = { 'x-dte-id': id, ...(req.requestId ? { 'x-request-id': req.requestId } : {}) };
    await enqueueOutbox(m, [
      {
        topic: PIPELINE_TOPICS.commands,
        schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.commands],
        key: id,
        payload: {
          event_id: randomUUID(),
          dte_id: id,
          organization_id: principal.organizationId,
          company_id: company.id,
          sii_env: principal.environment,
          tipo_dte: input.tipo_dte,
          folio,
          certificate_id: cert.id,
          caf_id: cafId,
          requested_at: now.toISOString(),
        },
        headers: correlation,
      },
      { ...queued, headers: correlation },
    ]);
    return { row: rows[0], created: true };
  });
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
