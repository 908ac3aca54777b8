/**
 * Writing pipeline messages through the transactional outbox (table `outbox`) from the workers
 * (signer, sii-uploader, sii-poller): a message is written in the same transaction as the state
 * change it announces, so it is published (by the one outbox relay) if and only if that change
 * commits, exactly once into the outbox and at least once onto the topic with a fixed event_id.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';

export interface PipelineOutboxEntry {
  /** logical topic (PIPELINE_TOPICS of @dte/messaging) */
  topic: string;
  /** schemas/avro basename */
  schema: string;
  key: string | null;
  payload: { event_id: string } & Record<string, unknown>;
  /**
   * Kafka headers sent with the message by the relay (log correlation: `x-request-id` of the api
   * request that issued the document, `x-dte-id`); see correlationHeaders.
   */
  headers?: Record<string, string>;
}

/**
 * The correlation headers a worker passes on from the message it consumed to what it writes
 * for the same document: `x-request-id` (when the consumed message has one) and `x-dte-id`.
 * Only for a message about ONE document/request; a batch of different requests gets none.
 */
export function correlationHeaders(
  consumed: Record<string, string> | undefined,
  dteId?: string,
): Record<string, string> | undefined {
  const requestId = consumed?.['x-request-id'];
  if (!requestId) return undefined;
  return dteId ? { 'x-request-id': requestId, 'x-dte-id': dteId } : { 'x-request-id': requestId };
}

/**
 * The request ids of the documents a worker has seen in consumed messages (dte.signed's
 * `x-request-id`, dte.uploaded's `x-request-ids`), remembered in memory (bounded, oldest
 * forgotten first) so that the messages it writes later for those documents carry them. Best
 * effort, for log correlation only: after a restart, or when another instance consumed the
 * message, a document's later messages simply carry no request id.
 */
export class RequestIds {
  private readonly ids = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  remember(dteId: string, requestId: string | undefined): void {
    if (!requestId) return;
    this.ids.delete(dteId);
    this.ids.set(dteId, requestId);
    if (this.ids.size > this.max) this.ids.delete(this.ids.keys().next().value as string);
  }

  /** Remembers every entry of an `x-request-ids` header (JSON object dte id → request id). */
  rememberAll(header: string | undefined): Record<string, string> {
    if (!header) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(header);
    } catch {
      return {};
    }
    const out: Record<string, string> = {};
    if (parsed && typeof parsed === 'object')
      for (const [dteId, id] of Object.entries(parsed as Record<string, unknown>))
        if (typeof id === 'string') {
          this.remember(dteId, id);
          out[dteId] = id;
        }
    return out;
  }

  get(dteId: string): string | undefined {
    return this.ids.get(dteId);
  }

  /** The headers of a message about one document: its request id, when known, and its id. */
  headersFor(dteId: string): Record<string, string> | undefined {
    return correlationHeaders({ 'x-request-id': this.get(dteId) ?? '' }, dteId);
  }

  /**
   * The headers of a message covering several documents (an envelope): `x-request-ids`, the
   * JSON object of those with a known request id; never one `x-request-id` for many requests.
   */
  headersForMany(dteIds: string[]): Record<string, string> | undefined {
    const known = this.of(dteIds);
    return Object.keys(known).length ? { 'x-request-ids': JSON.stringify(known) } : undefined;
  }

  /** dte id → request id of those of dteIds with a known request id. */
  of(dteIds: string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const d of dteIds) {
      const id = this.get(d);
      if (id) out[d] = id;
    }
    return out;
  }
}

/**
 * THE outbox INSERT: one statement for any number of entries, in their order (the relay
 * publishes by id), as SQL with its parameters numbered from `firstParam` so a caller can embed it
 * in a larger statement (a data-modifying CTE) and write the outbox rows in the same round trip as
 * the rows they announce. `onlyIf`: an SQL condition (e.g. `EXISTS (SELECT 1 FROM d)`) that must
 * hold for the rows to be written; `payload`: the jsonb expression stored for each entry's
 * payload text `p` (by default `p::jsonb`), for a value only the statement knows (the folio an
 * emission takes in the same statement); `headers`: the jsonb expression (`sql`) stored for each
 * entry's headers text `h` (by default `h::jsonb`), with a `join` to the entries `v` (event id `e`)
 * of what it reads.
 */
export function outboxInsertSql(
  entries: PipelineOutboxEntry[],
  opts: {
    firstParam?: number;
    onlyIf?: string;
    payload?: (p: string) => string;
    headers?: { join: string; sql: string };
  } = {},
): { sql: string; params: unknown[] } {
  const first = opts.firstParam ?? 1;
  const p = (i: number) => `$${first + i}::text[]`;
  const payload = opts.payload ? opts.payload('p') : 'p::jsonb';
  return {
    sql: `INSERT INTO outbox (topic, schema, message_key, payload, event_id, headers)
     SELECT t, s, k, ${payload}, e, ${opts.headers?.sql ?? 'h::jsonb'}
       FROM unnest(${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)})
       WITH ORDINALITY AS v(t, s, k, p, e, h, n) ${opts.headers?.join ?? ''}${opts.onlyIf ? ` WHERE ${opts.onlyIf}` : ''} ORDER BY n`,
    params: [
      entries.map((e) => e.topic),
      entries.map((e) => e.schema),
      entries.map((e) => e.key),
      entries.map((e) => JSON.stringify(e.payload)),
      entries.map((e) => e.payload.event_id),
      entries.map((e) => (e.headers ? JSON.stringify(e.headers) : null)),
    ],
  };
}

export async function writeOutbox(m: EntityManager, entries: PipelineOutboxEntry[]): Promise<void> {
  if (!m.queryRunner?.isTransactionActive) throw new Error('writeOutbox must run inside a transaction');
  if (entries.length === 0) return;
  const { sql, params } = outboxInsertSql(entries);
  await m.query(sql, params);
}

/** Value of a dte-status record (schemas/avro/dte-status.avsc). */
export interface DteStatusValue {
  event_id: string;
  dte_id: string;
  organization_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: number;
  sii_status: string;
  sii_glosa: string | null;
  track_id: string | null;
  observed_at: string;
  imported: boolean;
  source: string;
}

export interface StatusDocRef {
  id: string;
  organizationId: string;
  siiEnv: 'cert' | 'prod';
  tipoDte: number;
  folio: number | string;
}

/** The columns of a `dtes` row that name the document in its dte-status messages. */
export interface StatusDocColumns {
  id: string;
  organization_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: number | string;
}

/** The StatusDocRef of a `dtes` row. */
export function statusDocRef(row: StatusDocColumns): StatusDocRef {
  return {
    id: row.id,
    organizationId: row.organization_id,
    siiEnv: row.sii_env,
    tipoDte: row.tipo_dte,
    folio: row.folio,
  };
}

/** A dte-status change (key = document id) as an outbox entry. */
export function statusChangeEntry(
  doc: StatusDocRef,
  change: {
    siiStatus: string;
    glosa?: string | null;
    trackId?: string | null;
    observedAt: Date;
    source: string;
  },
): PipelineOutboxEntry & { payload: DteStatusValue } {
  return {
    topic: 'dte-status',
    schema: 'dte-status',
    key: doc.id,
    payload: {
      event_id: randomUUID(),
      dte_id: doc.id,
      organization_id: doc.organizationId,
      sii_env: doc.siiEnv,
      tipo_dte: doc.tipoDte,
      folio: Number(doc.folio),
      sii_status: change.siiStatus,
      sii_glosa: change.glosa ?? null,
      track_id: change.trackId ?? null,
      observed_at: change.observedAt.toISOString(),
      imported: false,
      source: change.source,
    },
  };
}
