import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Company scope for webhooks (issue 18). A subscription registered with a company-scoped API key
 * belongs to that company (`company_id`): only keys of that company (and organization-wide keys)
 * see and manage it, and it hears only that company's documents. Subscriptions that already
 * exist, and those made with organization-wide keys, keep `company_id` NULL: organization-wide,
 * as before (every company's documents; managed by organization-wide keys only).
 * The Idempotency-Key becomes unique per company (organization-wide counts as one scope).
 */
export class WebhookSubscriptionsCompany1763812200000 implements MigrationInterface {
  name = 'WebhookSubscriptionsCompany1763812200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_subscriptions ADD COLUMN company_id uuid REFERENCES companies(id) ON DELETE CASCADE`,
    );
    await q.query(`UPDATE webhook_subscriptions s SET company_id = c.id
      FROM companies c
      WHERE c.organization_id = s.organization_id
        AND (SELECT count(*) FROM companies c2 WHERE c2.organization_id = s.organization_id) = 1`);
    await q.query(`ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_idem_uq`);
    await q.query(
      `CREATE UNIQUE INDEX webhook_subscriptions_idem_uq ON webhook_subscriptions
         (organization_id, sii_env, (COALESCE(company_id, '00000000-0000-0000-0000-000000000000'::uuid)), idempotency_key)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_subscriptions_idem_uq`);
    await q.query(
      `ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_idem_uq UNIQUE (organization_id, sii_env, idempotency_key)`,
    );
    await q.query(`ALTER TABLE webhook_subscriptions DROP COLUMN company_id`);
  }
}
