import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts, onboarding and the audit log (issue 14, @dte/accounts):
 * - `users.password_hash`: scrypt hash in PHC-like form (`scrypt$N$r$p$salt$hash`); null for a
 *   user made by the seed command without a password (cannot log in).
 * - `organizations.rut` (the company RUT it was onboarded with, unique among organizations so a
 *   second sign-up for the same company must ask for access), its SII situation and when checked.
 * - `api_keys.last_used_at` and `created_by` (the user who created it).
 * - `access_requests`: a user asks to join the organization of a RUT; an owner decides with the
 *   request's token within 7 days.
 * - `counterparts`: receivers edited by the organization (the rest are remembered from emissions).
 * - `audit_log`: security-relevant actions, append-only, readable by owners.
 */
export class Accounts1763806000000 implements MigrationInterface {
  name = 'Accounts1763806000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN password_hash text`);
    await q.query(`ALTER TABLE organizations ADD COLUMN rut text`);
    await q.query(`ALTER TABLE organizations ADD COLUMN situacion_estado text`);
    await q.query(`ALTER TABLE organizations ADD COLUMN situacion_checked_at timestamptz`);
    await q.query(`CREATE UNIQUE INDEX organizations_rut_uq ON organizations (rut) WHERE rut IS NOT NULL`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN created_by uuid REFERENCES users(id)`);
    await q.query(`
      CREATE TABLE access_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid REFERENCES organizations(id) ON DELETE SET NULL,
        requester_id uuid NOT NULL REFERENCES users(id),
        token text NOT NULL UNIQUE,
        status text NOT NULL DEFAULT 'pendiente' CHECK (status IN ('pendiente', 'aprobada', 'rechazada')),
        role text CHECK (role IN ('admin', 'member')),
        decided_by uuid REFERENCES users(id),
        decided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX access_requests_requester_idx ON access_requests (requester_id, created_at)`);
    await q.query(`
      CREATE TABLE counterparts (
        company_id uuid NOT NULL REFERENCES companies(id),
        rut text NOT NULL,
        razon_social text NOT NULL,
        giro text,
        direccion text,
        comuna text,
        correo text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (company_id, rut)
      )`);
    await q.query(`
      CREATE TABLE audit_log (
        id bigserial PRIMARY KEY,
        organization_id uuid REFERENCES organizations(id) ON DELETE SET NULL,
        actor text NOT NULL,
        action text NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}',
        ip text,
        at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX audit_log_org_idx ON audit_log (organization_id, at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_log`);
    await q.query(`DROP TABLE counterparts`);
    await q.query(`DROP TABLE access_requests`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN created_by`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN last_used_at`);
    await q.query(`DROP INDEX organizations_rut_uq`);
    await q.query(`ALTER TABLE organizations DROP COLUMN situacion_checked_at`);
    await q.query(`ALTER TABLE organizations DROP COLUMN situacion_estado`);
    await q.query(`ALTER TABLE organizations DROP COLUMN rut`);
    await q.query(`ALTER TABLE users DROP COLUMN password_hash`);
  }
}
