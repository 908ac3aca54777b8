/**
 * The outbox's housekeeping: rows published longer ago than the retention are deleted, oldest id
 * first, a chunk per statement.
 *
 * Each statement reads the head of the primary key (the `chunk` lowest ids already published) and
 * deletes those of them past the retention; a chunk that was not all old ends the round. So a
 * round reads what it deletes plus at most one chunk, however large the outbox: the former
 * `DELETE … WHERE published_at < …` had no index to use and read the whole table every minute
 * (0.8 s of a core and 1.5 GB through the cache for 1.8 million rows, a day at ~20 documents a
 * second), holding the relay, which runs it, for as long.
 *
 * Ids follow commit order closely but not exactly, and a row published late (after a broker
 * outage) keeps its low id: such a row at the head stops the round until it too is past the
 * retention, which delays the purge behind it by at most that long. Rows never published (the
 * relay's backlog, the ones set aside with `failed_at`) are skipped, never deleted.
 */

import { deleteInChunks } from '@dte/database';

/** Rows one purge statement reads at the head of the outbox (and deletes at most). */
export const OUTBOX_PURGE_CHUNK = 5_000;

/** $1 the retention in milliseconds (text), $2 the chunk. */
export const PURGE_PUBLISHED_SQL = `WITH gone AS (
   DELETE FROM outbox
    WHERE id = ANY(ARRAY(SELECT id FROM outbox WHERE published_at IS NOT NULL ORDER BY id LIMIT $2))
      AND published_at < now() - ($1 || ' milliseconds')::interval
   RETURNING 1
 )
 SELECT count(*)::int AS n FROM gone`;

/**
 * Deletes the rows published longer than `retainMs` ago, oldest id first, up to `maxChunks`
 * statements of `chunk` rows; returns the rows deleted.
 */
export async function purgePublishedOutbox(
  db: { query(sql: string, params: unknown[]): Promise<unknown> },
  retainMs: number,
  maxChunks = 20,
  chunk = OUTBOX_PURGE_CHUNK,
): Promise<number> {
  return deleteInChunks(db, PURGE_PUBLISHED_SQL, [String(retainMs), chunk], chunk, maxChunks);
}
