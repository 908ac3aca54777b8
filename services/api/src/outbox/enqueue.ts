import type { EntityManager } from 'typeorm';

export interface OutboxEntry {
  /** logical topic (PIPELINE_TOPICS) */
  topic: string;
  /** schemas/avro basename */
  schema: string;
  key: string | null;
  /** the Avro value; must carry `event_id` */
  payload: { event_id: string } & Record<string, unknown>;
  /** Kafka headers sent with the message (x-request-id, x-dte-id: log correlation) */
  headers?: Record<string, string>;
}

/**
 * Writes messages to the outbox inside the caller's transaction: they are published (by the
 * relay) if and only if that transaction commits.
 */
export async function enqueueOutbox(m: EntityManager, entries: OutboxEntry[]): Promise<void> {
  if (!m.queryRunner?.isTransactionActive) throw new Error('enqueueOutbox must run inside a transaction');
  if (entries.length === 0) return;
  // one statement for all the entries (one round trip), in their order
  await m.query(
    `INSERT INTO outbox (topic, schema, message_key, payload, event_id, headers)
     SELECT t, s, k, p::jsonb, e, h::jsonb
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
       WITH ORDINALITY AS v(t, s, k, p, e, h, n) ORDER BY n`,
    [
      entries.map((e) => e.topic),
      entries.map((e) => e.schema),
      entries.map((e) => e.key),
      entries.map((e) => JSON.stringify(e.payload)),
      entries.map((e) => e.payload.event_id),
      entries.map((e) => (e.headers ? JSON.stringify(e.headers) : null)),
    ],
  );
}
