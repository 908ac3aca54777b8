import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The consumers' idempotency record: one row per (consumer, event id). */
export class ProcessedEvents1763780000000 implements MigrationInterface {
  name = 'ProcessedEvents1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE processed_events (
        consumer     varchar(100) NOT NULL,
        event_id     varchar(200) NOT NULL,
        processed_at timestamptz  NOT NULL DEFAULT now(),
        CONSTRAINT processed_events_pkey PRIMARY KEY (consumer, event_id)
      )`);
    await q.query(`CREATE INDEX processed_events_processed_at_idx ON processed_events (processed_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE processed_events`);
  }
}
