import { writeOutbox } from '@dte/database';
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
export function enqueueOutbox(m: EntityManager, entries: OutboxEntry[]): Promise<void> {
  // the workers' writeOutbox: one statement for all the entries, in their order
  return writeOutbox(m, entries);
}
