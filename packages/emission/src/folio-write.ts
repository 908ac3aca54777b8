import { randomUUID } from 'node:crypto';
import { DOCUMENT_FOLIO_PATH } from '@dte/engine';
import { ensureUsageRow, meterParams, meterRefusal, meterSql } from '@dte/billing';
import { outboxInsertSql, queryPrepared } from '@dte/database';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS } from '@dte/messaging';
import { DataSource, type EntityManager } from 'typeorm';
import { folioUnavailable, takeFoliosSql, type FolioKey } from '@dte/folios';
import { type OutboxEntry, statusOutboxEntry } from '@dte/pipeline';
import { DTE_COLUMNS, type DteRow } from './dte-row';
import { WriteCoalescer, type Outcome } from './write-coalescer';

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
 * Writes a new document with the next folio of its company and type (see writeOneWithFolio).
 * Through a DataSource (no transaction of the caller's), concurrent emissions of one company,
 * environment and type are COALESCED: while one statement of that key is running, the emissions
 * that arrive wait for it and then go together in one statement (writeManyWithFolios), up to
 * MAX_EMISSIONS_PER_STATEMENT. Those emissions would queue on the CAF's row lock anyway; together
 * they share one folio-taking UPDATE, one plan, one commit. Nothing waits for a timer: an emission
 * that finds no statement of its key running is written at once, alone. Inside the caller's
 * transaction (an EntityManager) it is always one statement of its own.
 * Undefined when no CAF could give a folio (nothing was written; folioUnavailable says why).
 */
export function writeWithFolio(
  q: DataSource | EntityManager,
  doc: NewDocument,
  draft: unknown,
): Promise<DteRow | undefined> {
  if (!(q instanceof DataSource)) return writeOneWithFolio(q, doc, draft);
  let writer = writers.get(q);
  if (!writer) {
    const db = q;
    writer = new WriteCoalescer((items) => flushEmissions(db, items), MAX_EMISSIONS_PER_STATEMENT);
    writers.set(q, writer);
  }
  return writer.submit(`${doc.organizationId}|${doc.companyId}|${doc.environment}|${doc.tipoDte}`, {
    doc,
    draft,
  });
}

/** The most emissions one statement writes (its size: ~3 KB of parameters per document). */
export const MAX_EMISSIONS_PER_STATEMENT = 32;

interface PendingEmission {
  doc: NewDocument;
  draft: unknown;
}

const writers = new WeakMap<DataSource, WriteCoalescer<PendingEmission, DteRow | undefined>>();

/**
 * One statement for the waiting emissions of one key. A document the statement gave no folio to
 * because its CAF ran out goes again (the next CAF, or none: folio unavailable). When the
 * statement fails (a used Idempotency-Key in the batch, say), nothing of it was written and every
 * emission is written alone, in order, so each gets its own answer and no other document fails
 * with it.
 */
async function flushEmissions(
  db: DataSource,
  items: PendingEmission[],
): Promise<Outcome<DteRow | undefined>[]> {
  let rows: DteRow[];
  try {
    rows = await writeManyWithFolios(db, items);
  } catch (err) {
    if (items.length === 1) return [{ err }];
    const out: Outcome<DteRow | undefined>[] = [];
    for (const it of items) out.push(await outcomeOf(() => writeOneWithFolio(db, it.doc, it.draft)));
    return out;
  }
  // nothing written: no folio, or the month's allowance has no room for all of them (some may
  // still fit: each goes alone, and the allowance decides one by one)
  if (rows.length === 0 && items.length > 1) {
    const out: Outcome<DteRow | undefined>[] = [];
    for (const it of items) out.push(await outcomeOf(() => writeOneWithFolio(db, it.doc, it.draft)));
    return out;
  }
  if (rows.length === 0) return items.map(() => ({ ok: undefined }));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return items.map((it) => {
    const row = byId.get(it.doc.id);
    return row ? { ok: row } : { again: true };
  });
}

async function outcomeOf<T>(f: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await f() };
  } catch (err) {
    return { err };
  }
}

/**
 * ONE statement takes the document's folio (THE allocator) and writes the document with it
 * (`draft`: the document built with folio 0; the database sets DOCUMENT_FOLIO_PATH), its first
 * feed row (the feed shows `queued` at once; the projector's later copy of the same event is a
 * no-op) and its dte.commands and dte-status outbox rows (folio and CAF set by the database): they
 * all commit or none does, and no folio is ever taken without its document. The key's unique index
 * refuses a second document under one Idempotency-Key (issueOrReplay answers it). Undefined when
 * no CAF could give a folio (nothing was written; folioUnavailable says why). It is
 * writeManyWithFolios with one document.
 */
export async function writeOneWithFolio(
  q: DataSource | EntityManager,
  doc: NewDocument,
  draft: unknown,
): Promise<DteRow | undefined> {
  return (await writeManyWithFolios(q, [{ doc, draft }]))[0];
}

/**
 * The documents of ONE key (organization, company, environment, type) in one statement: THE
 * allocator's takeFoliosSql takes up to one folio per document from one CAF, in the order given,
 * and each document that got one is written with it (see writeOneWithFolio: the document, its
 * first feed row, its dte.commands and dte-status outbox rows with folio and CAF set by the
 * database). Returns the rows written: all of them, the first k (the CAF had k folios left) or
 * none (no CAF could give a folio). All or nothing on error. One text for any number of documents
 * (arrays, unnest): outside a transaction it is one named prepared statement, and indexes fix its
 * plan.
 */
export async function writeManyWithFolios(
  q: DataSource | EntityManager,
  items: { doc: NewDocument; draft: unknown }[],
): Promise<DteRow[]> {
  const first = items[0]!.doc;
  const params: unknown[] = [];
  const $ = (v: unknown) => `$${params.push(v)}`;
  const col = <T>(f: (doc: NewDocument, draft: unknown) => T) => items.map((it) => f(it.doc, it.draft));
  const latest = new Date(Math.max(...items.map((it) => it.doc.now.getTime())));
  const [pOrg, pCompany, pEnv, pTipo] = [
    first.organizationId,
    first.companyId,
    first.environment,
    first.tipoDte,
  ].map($);
  // the month's allowance (@dte/billing): room for all of them locked before the CAF, or no folio
  const meterKey = { organizationId: first.organizationId, environment: first.environment, now: latest };
  await ensureUsageRow(q, meterKey);
  const mp = meterParams(meterKey);
  const pCount = `${$(items.length)}::int`;
  const meter = meterSql({
    organizationId: pOrg,
    environment: pEnv,
    periodo: $(mp.periodo),
    defaultLimit: $(mp.defaultLimit),
    count: pCount,
    written: '(SELECT count(*)::int FROM d)',
  });
  const taken = takeFoliosSql({
    organizationId: pOrg,
    companyId: pCompany,
    environment: pEnv,
    tipoDte: pTipo,
    now: `${$(latest)}::timestamptz`,
    count: pCount,
    guard: meter.guard,
  });
  const outbox = items.map((it) => emissionOutbox(it.doc));
  const arrays: [string, string, unknown[]][] = [
    ['id', 'uuid', col((d) => d.id)],
    ['certificate_id', 'uuid', col((d) => d.certificateId)],
    ['rut_emisor', 'text', col((d) => d.rutEmisor)],
    ['rut_receptor', 'text', col((d) => d.rutReceptor)],
    ['razon_social_receptor', 'text', col((d) => d.razonSocialReceptor)],
    ['fecha_emision', 'date', col((d) => d.fechaEmision)],
    ['neto', 'bigint', col((d) => Math.round(d.amounts.neto))],
    ['exento', 'bigint', col((d) => Math.round(d.amounts.exento))],
    ['iva', 'bigint', col((d) => Math.round(d.amounts.iva))],
    ['total', 'bigint', col((d) => Math.round(d.amounts.total))],
    ['input', 'text', col((d) => JSON.stringify(d.input))],
    ['draft', 'text', col((_d, draft) => JSON.stringify(draft))],
    ['idempotency_key', 'text', col((d) => d.idempotencyKey)],
    ['body_hash', 'text', col((d) => d.bodyHash)],
    ['created_at', 'timestamptz', col((d) => d.now)],
    ['request_id', 'text', col((d) => d.requestId ?? null)],
    ['queued_event', 'text', outbox.map((o) => o.queuedEventId)],
  ];
  const unnest = arrays.map(([, type, values]) => `${$(values)}::${type}[]`).join(', ');
  const names = arrays.map(([name]) => name).join(', ');
  const outboxSql = outboxInsertSql(
    outbox.flatMap((o) => o.entries),
    {
      firstParam: params.length + 1,
      // the entries of the documents written, with the folio and CAF each got (key = document id)
      onlyIf: 'EXISTS (SELECT 1 FROM d WHERE d.id::text = k)',
      payload: (p) =>
        `jsonb_set(jsonb_set(${p}::jsonb, '{folio}', to_jsonb((SELECT folio FROM d WHERE d.id::text = k))),
                   '{caf_id}', to_jsonb((SELECT caf_id FROM d WHERE d.id::text = k)), false)`,
    },
  );
  params.push(...outboxSql.params);
  const sql = `WITH ${meter.room},
     f AS (${taken}),
     nd AS (SELECT * FROM unnest(${unnest}) WITH ORDINALITY AS nd(${names}, n)),
     d AS (
       INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
           rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
           monto_total, input, document, sii_status, observed_at, idempotency_key, body_hash, created_at,
           request_id)
       SELECT nd.id, ${pOrg}::uuid, ${pCompany}::uuid, ${pEnv}, ${pTipo}::int, f.first + nd.n - 1, f.id,
              nd.certificate_id, nd.rut_emisor, nd.rut_receptor, nd.razon_social_receptor, nd.fecha_emision,
              nd.neto, nd.exento, nd.iva, nd.total, nd.input::jsonb,
              jsonb_set(nd.draft::jsonb, '{${DOCUMENT_FOLIO_PATH.join(',')}}', to_jsonb(f.first + nd.n - 1)),
              'queued', nd.created_at, nd.idempotency_key, nd.body_hash, nd.created_at, nd.request_id
         FROM f JOIN nd ON f.first + nd.n - 1 <= f.last
        ORDER BY nd.n
       RETURNING ${DTE_COLUMNS}),
     e AS (
       INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
       SELECT d.id, nd.queued_event, 'queued', NULL, NULL, 'api', nd.created_at FROM d JOIN nd ON nd.id = d.id),
     o AS (${outboxSql.sql}),
     ${meter.charge}
     SELECT * FROM d`;
  return q instanceof DataSource ? queryPrepared<DteRow>(q, sql, params) : q.query(sql, params);
}

/**
 * Why an emission's statement wrote nothing (always throws): the month's allowance (402
 * billing.free_tier_exceeded with usedThisMonth and limit) or, when it had room, the folio
 * (folioUnavailable: caf_not_found, caf_expired, caf_exhausted).
 */
export async function emissionRefused(
  q: DataSource | EntityManager,
  key: FolioKey,
  now: Date,
): Promise<never> {
  const overQuota = await meterRefusal(q, {
    organizationId: key.organizationId,
    environment: key.environment,
    now,
  });
  if (overQuota) throw overQuota;
  return folioUnavailable(q, key);
}
