import type { EntityManager } from 'typeorm';

export interface OutboxEntry {
  /** logical topic (PIPELINE_TOPICS) */
  topic: string;
  /** schemas/avro basename */
  schema: string;
  key: string | null;
  /** the Avro value; must carry `event_id` */
  payload: { event_id: string } & Record<string, unknown>;
}

/**
 * Writes messages to the outbox inside the caller's transaction: they are published (by the
 * relay) if and only if that transaction commits.
 */
export async function enqueueOutbox(m: EntityManager, entries: OutboxEntry[]): Promise<void> {
  if (!m.queryRunner?.isTransactionActive) throw new Error('enqueueOutbox must run inside a transaction');
  // multi-row INSERTs (in the given order, so ids follow it), at most 1000 rows per statement
  for (let i = 0; i < entries.length; i += 1000) {
    const chunk = entries.slice(i, i + 1000);
    const params: unknown[] = [];
    const rows = chunk.map((e, k) => {
      params.push(e.topic, e.schema, e.key, JSON.stringify(e.payload), e.payload.event_id);
      return `($${5 * k + 1}, $${5 * k + 2}, $${5 * k + 3}, $${5 * k + 4}, $${5 * k + 5})`;
    });
    await m.query(
      `INSERT INTO outbox (topic, schema, message_key, payload, event_id) VALUES ${rows.join(', ')}`,
      params,
    );
  }
}
