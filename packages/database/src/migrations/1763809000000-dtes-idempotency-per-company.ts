import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An Idempotency-Key is unique per company AND environment (it was per organization): two
 * companies of one organization that happen to use the same key (an order number, say) get two
 * documents, and neither ever receives the other's document back through the key.
 * A folio is likewise unique per company (each company, its own RUT, has its own CAFs and
 * folio 1 of each type); it was unique per organization, so the second company of an
 * organization could not issue the folio the first had already used.
 */
export class DtesIdempotencyPerCompany1763809000000 implements MigrationInterface {
  name = 'DtesIdempotencyPerCompany1763809000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dtes DROP CONSTRAINT dtes_org_env_idempotency_key_uq`);
    await q.query(
      `ALTER TABLE dtes ADD CONSTRAINT dtes_company_env_idempotency_key_uq UNIQUE (company_id, sii_env, idempotency_key)`,
    );
    await q.query(`ALTER TABLE dtes DROP CONSTRAINT dtes_org_env_tipo_folio_uq`);
    await q.query(
      `ALTER TABLE dtes ADD CONSTRAINT dtes_company_env_tipo_folio_uq UNIQUE (company_id, sii_env, tipo_dte, folio)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dtes DROP CONSTRAINT dtes_company_env_tipo_folio_uq`);
    await q.query(
      `ALTER TABLE dtes ADD CONSTRAINT dtes_org_env_tipo_folio_uq UNIQUE (organization_id, sii_env, tipo_dte, folio)`,
    );
    await q.query(`ALTER TABLE dtes DROP CONSTRAINT dtes_company_env_idempotency_key_uq`);
    await q.query(
      `ALTER TABLE dtes ADD CONSTRAINT dtes_org_env_idempotency_key_uq UNIQUE (organization_id, sii_env, idempotency_key)`,
    );
  }
}
