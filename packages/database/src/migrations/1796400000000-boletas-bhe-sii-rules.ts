import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Boletas and BHE as the SII treats them (issue 29, docs/boletas-bhe.md), and their idempotency
 * per company (issue 28):
 * - `boleta_sii_errors`: the SII's per-boleta findings of the boleta REST status
 *   (`detalle_rep_rech[].error[]`: seccion, linea, nivel, codigo, descripcion, detalle), kept
 *   as the poller read them and shown by GET /boletas/:id.
 * - `bhes.estado` gains `anulacion_solicitada`: an annulment asked after day 10 of the month
 *   following the issue waits for the receiver's confirmation; the BHE stays valid (and its
 *   retention declared) until then. `anulacion_solicitada_at` records when it was asked.
 * - `bhes` unique on (company, environment, numero_sii): the SII numbers a taxpayer's BHEs once.
 * - the idempotency keys of boleta batches and BHEs are per company, as the documents are.
 * (Timestamp: in the range given for this work, 17964xxxxxxxx.)
 */
export class BoletasBheSiiRules1796400000000 implements MigrationInterface {
  name = 'BoletasBheSiiRules1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE boleta_sii_errors (
        dte_id uuid PRIMARY KEY REFERENCES dtes(id) ON DELETE CASCADE,
        track_id text NOT NULL,
        estado text NOT NULL,
        errors jsonb NOT NULL,
        observed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`ALTER TABLE bhes DROP CONSTRAINT bhes_estado_check`);
    await q.query(
      `ALTER TABLE bhes ADD CONSTRAINT bhes_estado_check CHECK (estado IN ('vigente', 'anulacion_solicitada', 'anulada'))`,
    );
    await q.query(`ALTER TABLE bhes ADD COLUMN anulacion_solicitada_at timestamptz`);
    await q.query(
      `CREATE UNIQUE INDEX bhes_numero_sii_uq ON bhes (company_id, sii_env, numero_sii) WHERE numero_sii IS NOT NULL`,
    );
    await q.query(`ALTER TABLE boleta_batches DROP CONSTRAINT boleta_batches_key_uq`);
    await q.query(
      `ALTER TABLE boleta_batches ADD CONSTRAINT boleta_batches_key_uq UNIQUE (company_id, sii_env, idempotency_key)`,
    );
    await q.query(`ALTER TABLE bhes DROP CONSTRAINT bhes_key_uq`);
    await q.query(
      `ALTER TABLE bhes ADD CONSTRAINT bhes_key_uq UNIQUE (company_id, sii_env, idempotency_key)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE bhes DROP CONSTRAINT bhes_key_uq`);
    await q.query(
      `ALTER TABLE bhes ADD CONSTRAINT bhes_key_uq UNIQUE (organization_id, sii_env, idempotency_key)`,
    );
    await q.query(`ALTER TABLE boleta_batches DROP CONSTRAINT boleta_batches_key_uq`);
    await q.query(
      `ALTER TABLE boleta_batches ADD CONSTRAINT boleta_batches_key_uq UNIQUE (organization_id, sii_env, idempotency_key)`,
    );
    await q.query(`DROP INDEX bhes_numero_sii_uq`);
    await q.query(`ALTER TABLE bhes DROP COLUMN anulacion_solicitada_at`);
    await q.query(`UPDATE bhes SET estado = 'vigente' WHERE estado = 'anulacion_solicitada'`);
    await q.query(`ALTER TABLE bhes DROP CONSTRAINT bhes_estado_check`);
    await q.query(
      `ALTER TABLE bhes ADD CONSTRAINT bhes_estado_check CHECK (estado IN ('vigente', 'anulada'))`,
    );
    await q.query(`DROP TABLE boleta_sii_errors`);
  }
}
