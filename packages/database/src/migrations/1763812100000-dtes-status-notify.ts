import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A document's track id or SII status change is announced with `pg_notify('dte_status', <id>)`,
 * so the api's `Prefer: wait` requests are woken by the change instead of re-reading the row on a
 * timer (services/api/src/dtes/status-wakeups.ts). Sent at commit; nothing is sent when neither
 * column changed.
 */
export class DtesStatusNotify1763812100000 implements MigrationInterface {
  name = 'DtesStatusNotify1763812100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION dtes_status_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('dte_status', NEW.id::text);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER dtes_status_notify AFTER UPDATE OF track_id, sii_status ON dtes
      FOR EACH ROW
      WHEN (OLD.track_id IS DISTINCT FROM NEW.track_id OR OLD.sii_status IS DISTINCT FROM NEW.sii_status)
      EXECUTE FUNCTION dtes_status_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER dtes_status_notify ON dtes`);
    await q.query(`DROP FUNCTION dtes_status_notify()`);
  }
}
