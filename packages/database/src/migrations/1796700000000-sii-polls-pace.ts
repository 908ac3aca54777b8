import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two instants on the poll schedule (issue 27), so that waiting for the SII costs per envelope,
 * not per document per poll:
 * - `armed_at`: when the row was scheduled or last re-armed (a refresh). The poller's pace
 *   (services/sii-poller/src/pace.ts) reads the envelope's age from it; `created_at` stays the
 *   first scheduling.
 * - `polled_at`: the instant of the envelope's last answered QueryEstUp. A poll that changes
 *   nothing writes only this row; the api lists `sii_last_polled` as the later of the document's
 *   own column (written with each status change) and this one, instead of the poller rewriting
 *   every document row of the envelope on every poll.
 * (Timestamp: the 13-digit JavaScript form TypeORM reads, range 17967xxxxxxxx of issue 27.)
 */
export class SiiPollsPace1796700000000 implements MigrationInterface {
  name = 'SiiPollsPace1796700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sii_polls ADD COLUMN armed_at timestamptz, ADD COLUMN polled_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sii_polls DROP COLUMN armed_at, DROP COLUMN polled_at`);
  }
}
