import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plans and monthly consumption (issue 32, `@dte/billing`): the organization's plan, the monthly
 * document allowance per environment set by an operator (absent = the configured default), the
 * documents issued per organization, environment and month of America/Santiago (the row the
 * emission's statement locks and counts in), the 80 % and 100 % notices (one per threshold and
 * month: the primary key) and the payments recorded by an operator.
 * (Timestamp: range 17966xxxxxxxx given to the billing work.)
 */
export class Billing1796600000000 implements MigrationInterface {
  name = 'Billing1796600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing_plans (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        plan text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL
      )`);
    await q.query(`
      CREATE TABLE billing_allowances (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        monthly_limit integer CHECK (monthly_limit >= 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL,
        PRIMARY KEY (organization_id, sii_env)
      )`);
    await q.query(`
      CREATE TABLE billing_usage (
        organization_id uuid NOT NULL,
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        periodo text NOT NULL CHECK (periodo ~ '^[0-9]{4}-[0-9]{2}$'),
        used integer NOT NULL DEFAULT 0 CHECK (used >= 0),
        PRIMARY KEY (organization_id, sii_env, periodo)
      )`);
    await q.query(`
      CREATE TABLE billing_notices (
        organization_id uuid NOT NULL,
        sii_env text NOT NULL,
        periodo text NOT NULL,
        threshold integer NOT NULL CHECK (threshold IN (80, 100)),
        used integer NOT NULL,
        monthly_limit integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        sent_at timestamptz,
        PRIMARY KEY (organization_id, sii_env, periodo, threshold)
      )`);
    await q.query(
      `CREATE INDEX billing_notices_pending ON billing_notices (created_at) WHERE sent_at IS NULL`,
    );
    await q.query(`
      CREATE TABLE billing_payments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        amount_clp bigint NOT NULL CHECK (amount_clp > 0),
        periodo text NOT NULL CHECK (periodo ~ '^[0-9]{4}-[0-9]{2}$'),
        paid_on date NOT NULL,
        reference text,
        recorded_by text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX billing_payments_org ON billing_payments (organization_id, paid_on DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing_payments`);
    await q.query(`DROP TABLE billing_notices`);
    await q.query(`DROP TABLE billing_usage`);
    await q.query(`DROP TABLE billing_allowances`);
    await q.query(`DROP TABLE billing_plans`);
  }
}
