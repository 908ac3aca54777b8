import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Cessions (factoring) of issued DTEs, as the SII's cession register reports them. A CAF with a
 * ceded document cannot be deleted (caf.has_ceded_dtes). Written by whatever syncs the cession
 * register; read by the api.
 */
export class DteCessions1763800100000 implements MigrationInterface {
  name = 'DteCessions1763800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dte_cessions (
        dte_id uuid PRIMARY KEY REFERENCES dtes(id),
        cesionario_rut text,
        ceded_at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS dte_cessions');
  }
}
