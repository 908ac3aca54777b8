import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook signing secrets are stored sealed (`secret_sealed`, envelope encryption of
 * @dte/secrets under the subscription's id), like certificates and CAF keys. `secret` (in clear)
 * stays only for subscriptions made before this migration, until their next rotation; every row
 * has one or the other.
 */
export class WebhookSecretsSealed1763801100000 implements MigrationInterface {
  name = 'WebhookSecretsSealed1763801100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_subscriptions ADD COLUMN secret_sealed jsonb`);
    await q.query(`ALTER TABLE webhook_subscriptions ALTER COLUMN secret DROP NOT NULL`);
    await q.query(
      `ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_secret_present
         CHECK (secret IS NOT NULL OR secret_sealed IS NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhook_subscriptions WHERE secret IS NULL`);
    await q.query(`ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_secret_present`);
    await q.query(`ALTER TABLE webhook_subscriptions ALTER COLUMN secret SET NOT NULL`);
    await q.query(`ALTER TABLE webhook_subscriptions DROP COLUMN secret_sealed`);
  }
}
