import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The emission pipeline's workers: EnvioDTE uploads (sii-uploader) and the durable poll
 * schedule (sii-poller). See the entities SiiUpload and SiiPoll for the meaning of each state.
 */
export class SiiUploadsPolls1763800500000 implements MigrationInterface {
  name = 'SiiUploadsPolls1763800500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sii_uploads (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        rut_emisor text NOT NULL,
        certificate_id uuid NOT NULL REFERENCES certificates(id),
        dte_ids uuid[] NOT NULL,
        state text NOT NULL CHECK (state IN ('claimed', 'sending', 'accepted', 'failed', 'repeated')),
        envio_xml bytea,
        envio_sha256 text,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        lease_until timestamptz,
        track_id text,
        outcome text,
        outcome_glosa text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        uploaded_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX sii_uploads_due_idx ON sii_uploads (next_attempt_at) WHERE state IN ('claimed', 'sending')`,
    );
    // the uploader's work list: signed documents not yet bound to an upload
    await q.query(
      `CREATE INDEX dtes_to_upload_idx ON dtes (company_id, sii_env, certificate_id, signed_at)
        WHERE upload_id IS NULL AND signed_xml IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE sii_polls (
        upload_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        company_id uuid NOT NULL,
        rut_emisor text NOT NULL,
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        certificate_id uuid NOT NULL,
        track_id text NOT NULL,
        dte_ids uuid[] NOT NULL,
        state text NOT NULL CHECK (state IN ('active', 'done', 'stuck', 'no_permission')),
        attempts integer NOT NULL DEFAULT 0,
        next_poll_at timestamptz NOT NULL,
        last_estado text,
        last_glosa text,
        version integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX sii_polls_due_idx ON sii_polls (next_poll_at) WHERE state = 'active'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sii_polls`);
    await q.query(`DROP INDEX dtes_to_upload_idx`);
    await q.query(`DROP TABLE sii_uploads`);
  }
}
