/**
 * Consumer idempotency on top of `processed_events`: claim an event inside the transaction that
 * performs its effects. The first claim returns true; any later one (a redelivery, a replay)
 * returns false and the consumer skips the work. A claim that is rolled back never happened.
 */
import type { EntityManager } from 'typeorm';
import { deleteInChunks } from './chunked-delete';

export async function claimEvent(
  manager: EntityManager,
  consumer: string,
  eventId: string,
): Promise<boolean> {
  if (!manager.queryRunner?.isTransactionActive)
    throw new Error('claimEvent must run inside a transaction (with the effects it guards)');
  const rows: unknown[] = await manager.query(
    `INSERT INTO processed_events (consumer, event_id) VALUES ($1, $2)
     ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
    [consumer, eventId],
  );
  return rows.length === 1;
}

/** Days a claim is kept by default (PROCESSED_EVENTS_RETAIN_DAYS): over the broker's 7-day defaults. */
export const PROCESSED_EVENTS_RETAIN_DAYS_DEFAULT = 30;

/** Rows purgeProcessedEvents deletes per statement (short statements, no long lock on the table). */
export const PROCESSED_EVENTS_PURGE_CHUNK = 10_000;

/**
 * Deletes the claims of events processed longer than `retainMs` ago, a chunk per statement, up to
 * `maxChunks` statements; returns the rows deleted. A claim only matters while its record can be
 * delivered again: while it is in its topic (the topics' retention.ms, 7 days by the broker's
 * default) and a consumer group could re-read it (offsets.retention.minutes, 7 days), so the
 * retention must exceed both. Served by processed_events_processed_at_idx.
 */
export async function purgeProcessedEvents(
  db: { query(sql: string, params: unknown[]): Promise<unknown> },
  retainMs: number,
  maxChunks = 20,
): Promise<number> {
  return deleteInChunks(
    db,
    `WITH gone AS (
       DELETE FROM processed_events WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM processed_events
          WHERE processed_at < now() - ($1 || ' milliseconds')::interval
          LIMIT $2))
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [String(retainMs), PROCESSED_EVENTS_PURGE_CHUNK],
    PROCESSED_EVENTS_PURGE_CHUNK,
    maxChunks,
  );
}
