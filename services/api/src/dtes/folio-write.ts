import { randomUUID } from 'node:crypto';
import { DOCUMENT_FOLIO_PATH } from '@dte/engine';
import { outboxInsertSql, queryPrepared } from '@dte/database';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS } from '@dte/messaging';
import { DataSource, type EntityManager } from 'typeorm';
import { takeFolioSql } from '../caf/folio-allocator';
import type { OutboxEntry } from '../outbox/enqueue';
import { DTE_COLUMNS, type DteRow } from './dte-row';
import { statusOutboxEntry } from './status-record';

/** A new document of an emission (POST /dtes, POST /boletas, a batch's boleta), before its folio. */
export interface NewDocument {
  id: string;
  organizationId: string;
  companyId: string;
  environment: 'cert' | 'prod';
  tipoDte: number;
  certificateId: string;
  rutEmisor: string;
  rutReceptor: string | null;
  razonSocialReceptor: string;
  fechaEmision: string;
  /** CLP amounts of the row */
  amounts: { neto: number; exento: number; iva: number; total: number };
  /** the request body, kept as the document's input */
  input: unknown;
  idempotencyKey: string;
  bodyHash: string;
  /** the HTTP request's X-Request-Id (dtes.request_id, Kafka headers) */
  requestId?: string;
  now: Date;
}

/**
 * The outbox messages of a new document: its dte.commands entry (what the signer signs with) and
 * its dte-status `queued`, both with the request and document ids as Kafka headers (log
 * correlation). `taken` is the folio and CAF when known; without it the entries carry folio 0 and
 * no CAF, and writeWithFolio's statement sets them.
 */
export function emissionOutbox(
  doc: NewDocument,
  taken?: { folio: number; cafId: string },
): { entries: OutboxEntry[]; queuedEventId: string } {
  const queued = statusOutboxEntry(
    {
      id: doc.id,
      organizationId: doc.organizationId,
      siiEnv: doc.environment,
      tipoDte: doc.tipoDte,
      folio: taken?.folio ?? 0,
    },
    { siiStatus: 'queued', observedAt: doc.now },
  );
  const headers = { 'x-dte-id': doc.id, ...(doc.requestId ? { 'x-request-id': doc.requestId } : {}) };
  return {
    entries: [
      {
        topic: PIPELINE_TOPICS.commands,
        schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.commands],
        key: doc.id,
        payload: {
          event_id: randomUUID(),
          dte_id: doc.id,
          organization_id: doc.organizationId,
          company_id: doc.companyId,
          sii_env: doc.environment,
          tipo_dte: doc.tipoDte,
          folio: taken?.folio ?? 0,
          certificate_id: doc.certificateId,
          caf_id: taken?.cafId ?? null,
          requested_at: doc.now.toISOString(),
        },
        headers,
      },
      { ...queued, headers },
    ],
    queuedEventId: queued.payload.event_id,
  };
}

/**
 * ONE statement takes the document's folio (THE allocator's takeFolioSql) and writes the document
 * with it (`draft`: the document built with folio 0; the database sets DOCUMENT_FOLIO_PATH), its
 * first feed row (the feed shows `queued` at once; the projector's later copy of the same event is
 * a no-op) and its dte.commands and dte-status outbox rows (folio and CAF set by the database):
 * they all commit or none does, and no folio is ever taken without its document. The key's unique
 * index refuses a second document under one Idempotency-Key (issueOrReplay answers it).
 * Undefined when no CAF could give a folio (nothing was written; folioUnavailable says why).
 * Outside a transaction it is a named prepared statement: its text is the same for every
 * emission and indexes fix its plan.
 */
export async function writeWithFolio(
  q: DataSource | EntityManager,
  doc: NewDocument,
  draft: unknown,
): Promise<DteRow | undefined> {
  const { entries, queuedEventId } = emissionOutbox(doc);
  const params: unknown[] = [];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const [pId, pOrg, pCompany, pEnv, pTipo, pNow] = [
    doc.id,
    doc.organizationId,
    doc.companyId,
    doc.environment,
    doc.tipoDte,
    doc.now,
  ].map($);
  const values = [
    pId,
    pOrg,
    pCompany,
    pEnv,
    pTipo,
    'f.folio',
    'f.id',
    $(doc.certificateId),
    $(doc.rutEmisor),
    $(doc.rutReceptor),
    $(doc.razonSocialReceptor),
    $(doc.fechaEmision),
    $(Math.round(doc.amounts.neto)),
    $(Math.round(doc.amounts.exento)),
    $(Math.round(doc.amounts.iva)),
    $(Math.round(doc.amounts.total)),
    $(JSON.stringify(doc.input)),
    `jsonb_set(${$(JSON.stringify(draft))}::jsonb, '{${DOCUMENT_FOLIO_PATH.join(',')}}', to_jsonb(f.folio))`,
    `'queued'`,
    pNow,
    $(doc.idempotencyKey),
    $(doc.bodyHash),
    pNow,
    $(doc.requestId ?? null),
  ];
  const pEvent = $(queuedEventId);
  const outbox = outboxInsertSql(entries, {
    firstParam: params.length + 1,
    onlyIf: 'EXISTS (SELECT 1 FROM d)',
    // the folio and CAF the statement took (jsonb_set without create: caf_id only where it is)
    payload: (p) =>
      `jsonb_set(jsonb_set(${p}::jsonb, '{folio}', to_jsonb((SELECT folio FROM d))),
                 '{caf_id}', to_jsonb((SELECT caf_id FROM d)), false)`,
  });
  params.push(...outbox.params);
  const sql = `WITH f AS (${takeFolioSql({ organizationId: pOrg, companyId: pCompany, environment: pEnv, tipoDte: pTipo, now: pNow })}),
     d AS (
       INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
           rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
           monto_total, input, document, sii_status, observed_at, idempotency_key, body_hash, created_at,
           request_id)
       SELECT ${values.join(', ')} FROM f
       RETURNING ${DTE_COLUMNS}),
     e AS (
       INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
       SELECT ${pId}, ${pEvent}, 'queued', NULL, NULL, 'api', ${pNow} FROM d),
     o AS (${outbox.sql})
     SELECT * FROM d`;
  const rows: DteRow[] =
    q instanceof DataSource ? await queryPrepared<DteRow>(q, sql, params) : await q.query(sql, params);
  return rows[0];
}
