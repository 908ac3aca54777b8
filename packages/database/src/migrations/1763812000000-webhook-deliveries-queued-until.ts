import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `queued_until`: the overdue sweep of the webhooks service claims the pending deliveries it
 * puts in its in-memory queue (until this instant), so the next sweep, of this process or another,
 * does not queue them a second time while they wait for a slot. An attempt itself is still claimed
 * by `lease_until`; a claim that lapses (a crash) lets the sweep find the row again.
 */
export class WebhookDeliveriesQueuedUntil1763812000000 implements MigrationInterface {
  name = 'WebhookDeliveriesQueuedUntil1763812000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN queued_until timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN queued_until`);
  }
}
