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
import { bodyHash } from './canonical-json';
import { productionIssueGate } from '../production-gates';
import { loadCompanyProfile } from './company-profile';
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

/** The document an Idempotency-Key created in this organization and environment. */
async function byIdempotencyKey(
  db: Pick<DataSource, 'query'>,
  principal: Principal,
  key: string,
): Promise<DteRow | undefined> {
  const rows: DteRow[] = await db.query(
    `SELECT ${DTE_COLUMNS} FROM dtes WHERE organization_id = $1 AND sii_env = $2 AND idempotency_key = $3`,
    [principal.organizationId, principal.environment, key],
  );
  return rows[0];
}

function replay(existing: DteRow, hash: string): EmissionResult {
  if (existing.body_hash !== hash) {
    throw new ApiError(
      'idempotency_conflict',
      'This Idempotency-Key already issued a document with another body.',
      { detail: { existingDteId: existing.id } },
    );
  }
  return { row: existing, created: false };
}

/**
 * POST /dtes. Order of checks: Idempotency-Key present; a key already used answers from the
 * stored document (same body) or idempotency_conflict (another body) before anything else, so a
 * retry gets the original even if rules or the clock moved; sii_env as confirmation; the engine's
 * validation (in production after the organization's gate, onboarding_production_not_authorized);
 * rut_emisor against the key's company; in production, the type's gate (dte.type.prod_not_certified)
 * and the company's SII resolution (dte.production_resolucion_missing); the signing certificate
 * (X-Cert-Id rules).
 * Then, in ONE transaction serialized per (organization, key) by an advisory lock: re-check the
 * key, take the folio (THE allocator), build the document, insert it with the dte.commands and
 * dte-status `queued` outbox rows and the first feed row. A failure rolls the folio back.
 */
export async function emitDte(
  db: DataSource,
  principal: Principal,
  req: EmissionRequest,
  now: Date,
  opts: { rates?: ExchangeRateSource } = {},
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
  if (!principal.companyId) throw new ApiError('forbidden', 'Emission needs an API key of a company.');
  const hash = bodyHash(req.body);
  const known = await byIdempotencyKey(db, principal, key);
  if (known) return replay(known, hash);

  const body = req.body as Record<string, unknown> | undefined;
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
  const input: EmissionInput = validateEmission(req.body, { now, emisor: company.emisor });
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
  const certId =
    req.certIdHeader?.trim() || (typeof input.certificate_id === 'string' ? input.certificate_id : undefined);
  const cert = await resolveSigningCertificate(db, principal.organizationId, certId, { path: 'dte', now });
  // exports without otra_moneda: the rate is fetched before the transaction (no folio is held
  // while waiting on the network); without a source, buildDocument raises tipo_cambio_unavailable
  let exchangeRate: number | undefined;
  if (needsExchangeRate(input) && opts.rates) {
    exchangeRate = await opts.rates.rate((input as { tpo_moneda: string }).tpo_moneda, input.fecha_emision);
  }
  const rateOpt = exchangeRate === undefined ? {} : { exchangeRate };

  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `dte-idem:${principal.organizationId}:${principal.environment}:${key}`,
    ]);
    const raced = await byIdempotencyKey(m, principal, key);
    if (raced) return replay(raced, hash);

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
    const totals = computeTotals(input, rateOpt);
    const clp = totals.clp ?? {
      montoNeto: totals.montoNeto ?? 0,
      montoExento: totals.montoExento ?? 0,
      iva: totals.iva ?? 0,
      montoTotal: totals.montoTotal,
    };
    const id = randomUUID();
    const receptor = (input as { receptor: { rut?: string; razon_social: string } }).receptor;
    const rows: DteRow[] = await m.query(
      `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
         rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
         monto_total, input, document, sii_status, observed_at, idempotency_key, body_hash, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
         'queued', $19, $20, $21, $19)
       RETURNING ${DTE_COLUMNS}`,
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
      ],
    );
    const doc = {
      id,
      organizationId: principal.organizationId,
      siiEnv: principal.environment,
      tipoDte: input.tipo_dte,
      folio,
    };
    const queued = statusOutboxEntry(doc, { siiStatus: 'queued', observedAt: now });
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
        headers: { 'x-dte-id': id, ...(req.requestId ? { 'x-request-id': req.requestId } : {}) },
      },
      queued,
    ]);
    // the feed shows `queued` at once; the projector's later copy of the same event is a no-op
    await m.query(
      `INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
       VALUES ($1, $2, 'queued', NULL, NULL, 'api', $3)`,
      [id, queued.payload.event_id, now],
    );
    return { row: rows[0], created: true };
  });
}
