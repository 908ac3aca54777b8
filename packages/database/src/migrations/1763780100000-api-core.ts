import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tables of the api core: organizations, companies, branches, users and memberships, API keys,
 * certificates, CAFs (with the folio counter) and automatic stamping settings.
 */
export class ApiCore1763780100000 implements MigrationInterface {
  name = 'ApiCore1763780100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        prod_enabled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE companies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        rut text NOT NULL,
        razon_social text NOT NULL,
        giro text,
        direccion text,
        comuna text,
        actividad_economica integer,
        resolucion_cert_numero integer,
        resolucion_cert_fecha date,
        resolucion_prod_numero integer,
        resolucion_prod_fecha date,
        signer_ruts text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT companies_org_rut_uq UNIQUE (organization_id, rut)
      )`);
    await q.query(`
      CREATE TABLE branches (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_id uuid NOT NULL REFERENCES companies(id),
        nombre text NOT NULL,
        codigo_sii integer,
        direccion text NOT NULL,
        comuna text NOT NULL,
        closed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL UNIQUE,
        name text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE memberships (
        user_id uuid NOT NULL REFERENCES users(id),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, organization_id)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        environment text NOT NULL CHECK (environment IN ('cert', 'prod')),
        name text NOT NULL,
        prefix text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        scopes text[] NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE certificates (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        label text NOT NULL,
        rut text NOT NULL,
        subject text NOT NULL,
        serial_number text NOT NULL,
        fingerprint_sha256 text NOT NULL,
        not_before timestamptz NOT NULL,
        not_after timestamptz NOT NULL,
        p12_sealed jsonb NOT NULL,
        password_sealed jsonb NOT NULL,
        is_default boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX certificates_org_fingerprint_uq
      ON certificates (organization_id, fingerprint_sha256) WHERE deleted_at IS NULL`);
    await q.query(`CREATE UNIQUE INDEX certificates_org_default_uq
      ON certificates (organization_id) WHERE is_default AND deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE cafs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        environment text NOT NULL CHECK (environment IN ('cert', 'prod')),
        tipo_dte integer NOT NULL,
        rut_emisor text NOT NULL,
        desde bigint NOT NULL CHECK (desde > 0),
        hasta bigint NOT NULL,
        next_folio bigint NOT NULL,
        fecha_autorizacion date NOT NULL,
        expires_at timestamptz,
        idk integer NOT NULL,
        caf_xml text NOT NULL,
        rsa_public_key_pem text NOT NULL,
        rsa_private_key_sealed jsonb NOT NULL,
        source text NOT NULL CHECK (source IN ('upload', 'sii_request')),
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz,
        CONSTRAINT cafs_range_ck CHECK (hasta >= desde),
        CONSTRAINT cafs_next_folio_ck CHECK (next_folio BETWEEN desde AND hasta + 1),
        CONSTRAINT cafs_range_uq UNIQUE (company_id, environment, tipo_dte, desde)
      )`);
    await q.query(`CREATE INDEX cafs_allocation_idx
      ON cafs (organization_id, company_id, environment, tipo_dte, desde) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE caf_auto_settings (
        company_id uuid NOT NULL REFERENCES companies(id),
        tipo_dte integer NOT NULL,
        organization_id uuid NOT NULL REFERENCES organizations(id),
        enabled boolean NOT NULL,
        threshold integer NOT NULL CHECK (threshold >= 0),
        cantidad integer NOT NULL CHECK (cantidad > 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (company_id, tipo_dte)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'caf_auto_settings',
      'cafs',
      'certificates',
      'api_keys',
      'memberships',
      'users',
      'branches',
      'companies',
      'organizations',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
