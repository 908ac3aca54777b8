/**
 * Consumer idempotency on top of `processed_events`: claim an event inside the transaction that
 * performs its effects. The first claim returns true; any later one (a redelivery, a replay)
 * returns false and the consumer skips the work. A claim that is rolled back never happened.
 */
import type { EntityManager } from 'typeorm';

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
