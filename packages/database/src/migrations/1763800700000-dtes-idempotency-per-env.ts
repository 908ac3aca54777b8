import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An Idempotency-Key is unique per organization AND environment: a client that uses its order
 * number as the key in certification and then in production must get two documents, never the
 * certification one back under a production key.
 */
export class DtesIdempotencyPerEnv1763800700000 implements MigrationInterface {
  name = 'DtesIdempotencyPerEnv1763800700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dtes DROP CONSTRAINT dtes_org_idempotency_key_uq`);
    await q.query(
      `ALTER TABLE dtes ADD CONSTRAINT dtes_org_env_idempotency_key_uq UNIQUE (organization_id, sii_env, idempotency_key)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dtes DROP CONSTRAINT dtes_org_env_idempotency_key_uq`);
    await q.query(
      `ALTER TABLE dtes ADD CONSTRAINT dtes_org_idempotency_key_uq UNIQUE (organization_id, idempotency_key)`,
    );
  }
}
