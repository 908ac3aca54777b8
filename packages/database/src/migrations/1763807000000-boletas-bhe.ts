import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Boletas (39/41) and honorarium receipts (BHE), both behind their flags (issue 16).
 *
 * - Boletas live in `dtes` like every document (same folio allocator, pipeline, dte-status,
 *   webhooks). A boleta of a batch carries `batch_id` and `batch_position`: a position is
 *   issued once per batch (unique), whatever the retries.
 * - `boleta_batches`: one per (organization, environment, batch_idempotency_key); `body_hash`
 *   tells a retry (same body) from a conflict.
 * - `sii_uploads.channel`: `boleta` envelopes (EnvioBOLETA) go through the SII's boleta REST
 *   channel and are polled there; `dte` (EnvioDTE, DTEUpload + QueryEstUp) is everything else.
 * - `bhes`: the receipts, with the retention computed for the year of issue and the SII's
 *   number once issued there; annulled ones keep their row (anulada_at).
 */
export class BoletasBhe1763807000000 implements MigrationInterface {
  name = 'BoletasBhe1763807000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE boleta_batches (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        idempotency_key text NOT NULL,
        body_hash text NOT NULL,
        total integer NOT NULL CHECK (total BETWEEN 1 AND 1000),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT boleta_batches_key_uq UNIQUE (organization_id, sii_env, idempotency_key)
      )`);
    await q.query(`ALTER TABLE dtes ADD COLUMN batch_id uuid REFERENCES boleta_batches(id)`);
    await q.query(`ALTER TABLE dtes ADD COLUMN batch_position integer`);
    await q.query(
      `CREATE UNIQUE INDEX dtes_batch_position_uq ON dtes (batch_id, batch_position) WHERE batch_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX dtes_boletas_idx ON dtes (organization_id, sii_env, created_at DESC, id DESC)
         WHERE tipo_dte IN (39, 41)`,
    );
    await q.query(
      `ALTER TABLE sii_uploads ADD COLUMN channel text NOT NULL DEFAULT 'dte' CHECK (channel IN ('dte', 'boleta'))`,
    );
    await q.query(`
      CREATE TABLE bhes (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        idempotency_key text NOT NULL,
        body_hash text NOT NULL,
        rut_emisor text NOT NULL,
        rut_receptor text NOT NULL,
        razon_social_receptor text,
        fecha_emision date NOT NULL,
        periodo text NOT NULL,
        descripcion text NOT NULL,
        monto_bruto bigint NOT NULL CHECK (monto_bruto > 0),
        tasa_retencion numeric(5, 2) NOT NULL,
        monto_retencion bigint NOT NULL,
        monto_liquido bigint NOT NULL,
        retencion_por text NOT NULL CHECK (retencion_por IN ('receptor', 'emisor')),
        estado text NOT NULL DEFAULT 'vigente' CHECK (estado IN ('vigente', 'anulada')),
        numero_sii bigint,
        anulada_at timestamptz,
        motivo_anulacion text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT bhes_key_uq UNIQUE (organization_id, sii_env, idempotency_key)
      )`);
    await q.query(
      `CREATE INDEX bhes_org_created_idx ON bhes (organization_id, sii_env, created_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE bhes`);
    await q.query(`ALTER TABLE sii_uploads DROP COLUMN channel`);
    await q.query(`DROP INDEX dtes_boletas_idx`);
    await q.query(`DROP INDEX dtes_batch_position_uq`);
    await q.query(`ALTER TABLE dtes DROP COLUMN batch_position`);
    await q.query(`ALTER TABLE dtes DROP COLUMN batch_id`);
    await q.query(`DROP TABLE boleta_batches`);
  }
}
