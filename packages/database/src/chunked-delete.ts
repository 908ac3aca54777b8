/**
 * Housekeeping deletes in short statements: `sql` deletes at most `chunk` rows and answers their
 * count as `n`; it runs again while a statement deleted a whole chunk, up to `maxChunks` times.
 * Returns the rows deleted. Used by purgeProcessedEvents and the outbox relay's purge.
 */
export async function deleteInChunks(
  db: { query(sql: string, params: unknown[]): Promise<unknown> },
  sql: string,
  params: unknown[],
  chunk: number,
  maxChunks: number,
): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < maxChunks; i++) {
    const rows = (await db.query(sql, params)) as { n: number }[];
    const n = rows[0]?.n ?? 0;
    deleted += n;
    if (n < chunk) break;
  }
  return deleted;
}
