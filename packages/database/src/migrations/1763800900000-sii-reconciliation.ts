import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation of uploads the SII may hold without our having a track id (see the entities
 * SiiUpload and SiiDocCheck):
 * - sii_uploads: state `unconfirmed` (the attempts ended without a readable answer after a
 *   request that may have reached the SII), `attempt_open` (a DTEUpload is in flight: still true
 *   when the next attempt starts means the last one's fate is unknown) and `maybe_registered`
 *   (some attempt may have reached the SII).
 * - sii_doc_checks: the sii-poller's per-document QueryEstDte schedule for the documents of a
 *   `repeated` or `unconfirmed` upload. Documents already left at envio_repetido by the previous
 *   rule are scheduled here too, so they reach their verdict.
 */
export class SiiReconciliation1763800900000 implements MigrationInterface {
  name = 'SiiReconciliation1763800900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sii_uploads DROP CONSTRAINT IF EXISTS sii_uploads_state_check`);
    await q.query(
      `ALTER TABLE sii_uploads ADD CONSTRAINT sii_uploads_state_check
         CHECK (state IN ('claimed', 'sending', 'accepted', 'failed', 'repeated', 'unconfirmed'))`,
    );
    await q.query(`ALTER TABLE sii_uploads ADD COLUMN attempt_open boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE sii_uploads ADD COLUMN maybe_registered boolean NOT NULL DEFAULT false`);
    await q.query(`
      CREATE TABLE sii_doc_checks (
        dte_id uuid PRIMARY KEY,
        upload_id uuid NOT NULL,
        organization_id uuid NOT NULL,
        company_id uuid NOT NULL,
        rut_emisor text NOT NULL,
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        certificate_id uuid NOT NULL,
        state text NOT NULL CHECK (state IN ('active', 'done', 'stuck', 'no_permission')),
        attempts integer NOT NULL DEFAULT 0,
        next_check_at timestamptz NOT NULL,
        last_estado text,
        last_glosa text,
        version integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX sii_doc_checks_due_idx ON sii_doc_checks (next_check_at) WHERE state = 'active'`,
    );
    await q.query(`
      INSERT INTO sii_doc_checks (dte_id, upload_id, organization_id, company_id, rut_emisor, sii_env,
                                  certificate_id, state, next_check_at)
      SELECT d.id, u.id, u.organization_id, u.company_id, u.rut_emisor, u.sii_env, u.certificate_id, 'active', now()
        FROM sii_uploads u JOIN dtes d ON d.id = ANY(u.dte_ids)
       WHERE u.state = 'repeated' AND d.track_id IS NULL
      ON CONFLICT (dte_id) DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sii_doc_checks`);
    await q.query(`ALTER TABLE sii_uploads DROP COLUMN maybe_registered`);
    await q.query(`ALTER TABLE sii_uploads DROP COLUMN attempt_open`);
    await q.query(`UPDATE sii_uploads SET state = 'failed' WHERE state = 'unconfirmed'`);
    await q.query(`ALTER TABLE sii_uploads DROP CONSTRAINT sii_uploads_state_check`);
    await q.query(
      `ALTER TABLE sii_uploads ADD CONSTRAINT sii_uploads_state_check
         CHECK (state IN ('claimed', 'sending', 'accepted', 'failed', 'repeated'))`,
    );
  }
}
