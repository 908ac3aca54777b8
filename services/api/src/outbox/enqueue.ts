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
  for (const e of entries) {
    await m.query(
      `INSERT INTO outbox (topic, schema, message_key, payload, event_id, headers) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        e.topic,
        e.schema,
        e.key,
        JSON.stringify(e.payload),
        e.payload.event_id,
        e.headers ? JSON.stringify(e.headers) : null,
      ],
    );
  }
}
