import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Kafka headers of an outbox row (`x-request-id`, `x-dte-id`): the relay sends them with the
 * message, so the request that caused a message can be followed in the logs of the services
 * that consume it. NULL: no headers (rows written before, or by writers that set none).
 */
export class OutboxHeaders1763808000000 implements MigrationInterface {
  name = 'OutboxHeaders1763808000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN headers jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN headers`);
  }
}
