import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Purchases side (issue 12):
 * - `rcv_periods`: one row per (company, environment, period) with the state of its sync from the
 *   SII (the one-writer rule is a PostgreSQL advisory lock on the same triple, see @dte/reception);
 *   a failed sync keeps `synced_at` and the documents of the last good snapshot.
 * - `rcv_documents`: the register's documents, sales and purchases, with the SII's state, and for
 *   our own sales the status our pipeline knows (from the compacted dte-status topic).
 * - `recepcion_documentos`: the purchases inbox (from the RCV sync and from received intercambio
 *   envelopes, with the received XML), legal deadline, cesión evidence and register events.
 * - `rcof_reports`: read-only consumption reports (never sent by this service).
 */
export class RcvReception1763804000000 implements MigrationInterface {
  name = 'RcvReception1763804000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rcv_periods (
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        periodo text NOT NULL CHECK (periodo ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'synced', 'retrying', 'failed')),
        requested_at timestamptz NOT NULL DEFAULT now(),
        synced_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_error text,
        PRIMARY KEY (company_id, sii_env, periodo)
      )`);
    await q.query(`
      CREATE TABLE rcv_documents (
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        operacion text NOT NULL CHECK (operacion IN ('ventas', 'compras')),
        periodo text NOT NULL,
        rut_emisor text NOT NULL,
        tipo_dte integer NOT NULL,
        folio bigint NOT NULL,
        rut_receptor text,
        fch_emis date,
        fecha_recepcion timestamptz,
        mnt_neto bigint NOT NULL DEFAULT 0,
        mnt_exe bigint NOT NULL DEFAULT 0,
        iva bigint NOT NULL DEFAULT 0,
        mnt_total bigint NOT NULL DEFAULT 0,
        in_sii boolean NOT NULL DEFAULT false,
        sii_estado text CHECK (sii_estado IN ('registered', 'pending', 'claimed', 'accepted')),
        sii_estado_raw text,
        eventos text[] NOT NULL DEFAULT '{}',
        dte_id uuid,
        own_sii_status text,
        own_observed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (company_id, sii_env, operacion, rut_emisor, tipo_dte, folio)
      )`);
    await q.query(`CREATE INDEX rcv_documents_period_idx ON rcv_documents (company_id, sii_env, periodo)`);
    await q.query(
      `CREATE UNIQUE INDEX rcv_documents_dte_uq ON rcv_documents (dte_id) WHERE dte_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE recepcion_documentos (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        rut_emisor text NOT NULL,
        razon_social_emisor text,
        tipo_dte integer NOT NULL,
        folio bigint NOT NULL,
        fch_emis date,
        mnt_neto bigint NOT NULL DEFAULT 0,
        mnt_exe bigint NOT NULL DEFAULT 0,
        iva bigint NOT NULL DEFAULT 0,
        mnt_total bigint NOT NULL DEFAULT 0,
        fecha_recepcion_sii timestamptz,
        origen text[] NOT NULL DEFAULT '{}',
        xml bytea,
        sii_estado text CHECK (sii_estado IN ('registered', 'pending', 'claimed', 'accepted')),
        eventos jsonb NOT NULL DEFAULT '[]',
        sii_eventos text[] NOT NULL DEFAULT '{}',
        cesion_estado text NOT NULL DEFAULT 'indeterminado' CHECK (cesion_estado IN ('cedida', 'no_cedida', 'indeterminado')),
        cesion_motivo text,
        cesion_cesionario jsonb,
        cesion_consultado_al timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT recepcion_doc_uq UNIQUE (company_id, sii_env, rut_emisor, tipo_dte, folio)
      )`);
    await q.query(
      `CREATE INDEX recepcion_documentos_org_idx ON recepcion_documentos (organization_id, sii_env, created_at, id)`,
    );
    await q.query(`
      CREATE TABLE rcof_reports (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        fecha date NOT NULL,
        secuencia integer NOT NULL DEFAULT 1,
        resumen jsonb NOT NULL DEFAULT '[]',
        track_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT rcof_reports_uq UNIQUE (company_id, sii_env, fecha, secuencia)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE rcof_reports`);
    await q.query(`DROP TABLE recepcion_documentos`);
    await q.query(`DROP TABLE rcv_documents`);
    await q.query(`DROP TABLE rcv_periods`);
  }
}
