import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhook subscriptions, their delivery records, and the per-document state the webhooks service applies. */
export class Webhooks1763790000000 implements MigrationInterface {
  name = 'Webhooks1763790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_subscriptions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        url text NOT NULL,
        events text[] NOT NULL CHECK (cardinality(events) > 0),
        secret text NOT NULL,
        active boolean NOT NULL DEFAULT true,
        disabled_at timestamptz,
        disabled_reason text,
        consecutive_exhausted integer NOT NULL DEFAULT 0,
        idempotency_key text,
        request_hash text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_subscriptions_idem_uq UNIQUE (organization_id, sii_env, idempotency_key),
        CONSTRAINT webhook_subscriptions_disabled_ck CHECK (active OR disabled_at IS NOT NULL)
      )`);
    await q.query(
      `CREATE INDEX webhook_subscriptions_org_env_idx ON webhook_subscriptions (organization_id, sii_env)`,
    );
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY,
        subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
        event_id text NOT NULL,
        event_type text NOT NULL,
        payload text NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'exhausted')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        lease_until timestamptz,
        last_status integer,
        last_error text,
        created_at timestamptz NOT NULL,
        completed_at timestamptz,
        CONSTRAINT webhook_deliveries_sub_event_uq UNIQUE (subscription_id, event_id)
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_completed_idx ON webhook_deliveries (completed_at) WHERE state <> 'pending'`,
    );
    await q.query(`
      CREATE TABLE webhook_document_states (
        dte_id uuid PRIMARY KEY,
        sii_status text,
        observed_at text,
        emitted boolean NOT NULL DEFAULT false
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_document_states`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_subscriptions`);
  }
}
