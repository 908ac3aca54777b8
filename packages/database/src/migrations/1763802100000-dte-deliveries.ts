import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `dte_deliveries`: the intercambio e-mails to a document's receptor (issue 11). One row per
 * sending asked for: `emission` (the emission's correo_receptor, once the SII accepted the
 * document; at most one per document) or `resend` (POST /dtes/:id/resend-delivery). A row is
 * pending until sent, retried with backoff until `attempts` reaches the worker's maximum (failed).
 */
export class DteDeliveries1763802100000 implements MigrationInterface {
  name = 'DteDeliveries1763802100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dte_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        dte_id uuid NOT NULL REFERENCES dtes(id),
        reason text NOT NULL CHECK (reason IN ('emission', 'resend')),
        correos text[] NOT NULL CHECK (cardinality(correos) BETWEEN 1 AND 5),
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        last_error text,
        message_id text,
        sent_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX dte_deliveries_emission_uq ON dte_deliveries (dte_id) WHERE reason = 'emission'`,
    );
    await q.query(
      `CREATE INDEX dte_deliveries_due ON dte_deliveries (next_attempt_at) WHERE state = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE dte_deliveries');
  }
}
