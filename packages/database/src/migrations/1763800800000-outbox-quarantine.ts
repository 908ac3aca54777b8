import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows that can never be published (a payload its Avro schema refuses: a bug of the
 * writer) are set aside with failed_at and last_error instead of blocking every row behind them.
 */
export class OutboxQuarantine1763800800000 implements MigrationInterface {
  name = 'OutboxQuarantine1763800800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN failed_at timestamptz, ADD COLUMN last_error text`);
    await q.query(`DROP INDEX outbox_unpublished_idx`);
    await q.query(
      `CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL AND failed_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbox_unpublished_idx`);
    await q.query(`CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL`);
    await q.query(`ALTER TABLE outbox DROP COLUMN failed_at, DROP COLUMN last_error`);
  }
}
