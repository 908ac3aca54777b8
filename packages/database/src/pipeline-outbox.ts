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
}

export async function writeOutbox(m: EntityManager, entries: PipelineOutboxEntry[]): Promise<void> {
  if (!m.queryRunner?.isTransactionActive) throw new Error('writeOutbox must run inside a transaction');
  if (entries.length === 0) return;
  const values: unknown[] = [];
  const rows = entries.map((e, i) => {
    values.push(e.topic, e.schema, e.key, JSON.stringify(e.payload), e.payload.event_id);
    const b = i * 5;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
  });
  await m.query(
    `INSERT INTO outbox (topic, schema, message_key, payload, event_id) VALUES ${rows.join(', ')}`,
    values,
  );
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
