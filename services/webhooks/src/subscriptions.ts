import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { seal, webhookSecretAad, type KeyWrapper } from '@dte/secrets';
import { ServiceError } from '@dte/error-catalog';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@dte/status';
import type { Clock } from './clock';
import { buildTestEnvelope } from './envelope';
import type { SiiEnv, Subscription } from './model';
import { isUuid, subscriptionFromRow } from './pg-store';
import { newWebhookSecret } from './signature';
import { checkWebhookUrl, type Resolver, type UrlPolicy } from './url-policy';

/**
 * The subscription operations behind the /webhooks routes. Every one is scoped to the caller's
 * organization and environment: a subscription of another organization, or of the other
 * environment, is not found (404 not_found, the same answer as an absent one).
 */

/** The public record of a subscription (spec: id, url, events, active, disabled_at, disabled_reason). */
export interface SubscriptionRecord {
  id: string;
  url: string;
  events: WebhookEventType[];
  active: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export function publicRecord(s: Subscription): SubscriptionRecord {
  return {
    id: s.id,
    url: s.url,
    events: s.events,
    active: s.active,
    disabled_at: s.disabled_at ? s.disabled_at.toISOString() : null,
    disabled_reason: s.disabled_reason,
  };
}

export interface Scope {
  organizationId: string;
  env: SiiEnv;
  /**
   * A company-scoped API key's company: it sees, creates and manages only that company's
   * subscriptions. Null or absent: an organization-wide key, which sees every subscription of
   * the organization and creates organization-wide ones.
   */
  companyId?: string | null;
}

/**
 * The SQL condition that keeps a query inside the scope's company (none for organization-wide
 * keys), using parameter number `n` for the company id; and the parameters to append.
 */
function companyClause(scope: Scope, n: number): { sql: string; params: string[] } {
  return scope.companyId
    ? { sql: ` AND company_id = $${n}`, params: [scope.companyId] }
    : { sql: '', params: [] };
}

function notFound(): never {
  throw new ServiceError('not_found', 'Webhook subscription not found.');
}

function requestHash(url: string, events: string[]): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify({ url, events: [...events].sort() }))
    .digest('hex');
}

export interface CreateResult {
  subscription: Subscription;
  /** false when the Idempotency-Key had already created it */
  created: boolean;
  /** the signing secret, only when `created` (it is shown once) */
  secret?: string;
}

/** A new secret for subscription `id`, sealed under its id (the row stores only the sealed form). */
async function newSealedSecret(keys: KeyWrapper, id: string) {
  const secret = newWebhookSecret();
  return { secret, sealed: await seal(keys, Buffer.from(secret, 'utf8'), webhookSecretAad(id)) };
}

/**
 * Registers a subscription once per Idempotency-Key: the first request creates it (the caller
 * shows its secret), a repeat of the same request returns the same subscription, a reuse of the
 * key with another url or events is 409 idempotency_conflict.
 */
export async function createSubscription(
  ds: DataSource,
  keys: KeyWrapper,
  scope: Scope,
  input: { url: string; events: WebhookEventType[]; idempotencyKey: string },
  check: { policy: UrlPolicy; resolver?: Resolver },
): Promise<CreateResult> {
  const events = [...new Set(input.events)];
  for (const e of events)
    if (!WEBHOOK_EVENT_TYPES.includes(e))
      throw new ServiceError('validation_failed', `unknown event type ${e}`);
  const hash = requestHash(input.url, events);
  const existing = await findByKey(ds, scope, input.idempotencyKey);
  if (existing) return repeatOrConflict(existing, hash);
  await assertBelowCap(ds, scope);
  await checkWebhookUrl(input.url, check.policy, check.resolver);
  const id = crypto.randomUUID();
  const { secret, sealed } = await newSealedSecret(keys, id);
  const rows: Record<string, unknown>[] = await ds.transaction(async (m) => {
    // the cap holds under concurrent registrations: one at a time per organization and environment
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `webhook-subscriptions:${scope.organizationId}:${scope.env}`,
    ]);
    const again = await findByKey(m, scope, input.idempotencyKey);
    if (again) return [];
    await assertBelowCap(m, scope);
    return m.query(
      `INSERT INTO webhook_subscriptions
         (id, organization_id, sii_env, url, events, secret_sealed, idempotency_key, request_hash, company_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (organization_id, sii_env,
                    (COALESCE(company_id, '00000000-0000-0000-0000-000000000000'::uuid)), idempotency_key)
       DO NOTHING
       RETURNING *`,
      [
        id,
        scope.organizationId,
        scope.env,
        input.url,
        events,
        sealed,
        input.idempotencyKey,
        hash,
        scope.companyId ?? null,
      ],
    );
  });
  if (rows[0]) return { subscription: subscriptionFromRow(rows[0]), created: true, secret };
  // a concurrent request with the same key won the insert
  const raced = await findByKey(ds, scope, input.idempotencyKey);
  if (!raced) throw new Error('subscription vanished after an idempotency conflict');
  return repeatOrConflict(raced, hash);
}

/**
 * Subscriptions one organization may hold per environment (active or disabled; DELETE frees a
 * place). Each dte-status event fans out to every active one, so the cap bounds the work one
 * tenant's event puts on the shared consumer.
 */
export const MAX_SUBSCRIPTIONS_PER_ORG_ENV = 50;

/** Refuses a registration at the cap: 400 validation_failed (the spec names no code of its own). */
async function assertBelowCap(db: Pick<DataSource, 'query'>, scope: Scope): Promise<void> {
  const rows: { n: number }[] = await db.query(
    'SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = $1 AND sii_env = $2',
    [scope.organizationId, scope.env],
  );
  const n = rows[0]?.n ?? 0;
  if (n >= MAX_SUBSCRIPTIONS_PER_ORG_ENV) {
    throw new ServiceError(
      'validation_failed',
      `An organization holds at most ${MAX_SUBSCRIPTIONS_PER_ORG_ENV} webhook subscriptions per environment; delete one first.`,
      {
        issues: [
          { path: '/url', message: `at most ${MAX_SUBSCRIPTIONS_PER_ORG_ENV} subscriptions per environment` },
        ],
        detail: { max: MAX_SUBSCRIPTIONS_PER_ORG_ENV, current: n },
      },
    );
  }
}

async function findByKey(ds: Pick<DataSource, 'query'>, scope: Scope, key: string) {
  const rows: Record<string, unknown>[] = await ds.query(
    `SELECT * FROM webhook_subscriptions WHERE organization_id = $1 AND sii_env = $2 AND idempotency_key = $3
        AND company_id IS NOT DISTINCT FROM $4::uuid`,
    [scope.organizationId, scope.env, key, scope.companyId ?? null],
  );
  return rows[0];
}

function repeatOrConflict(row: Record<string, unknown>, hash: string): CreateResult {
  if (row.request_hash !== hash)
    throw new ServiceError(
      'idempotency_conflict',
      'This Idempotency-Key was used with another url or events.',
      { detail: { existingWebhookId: row.id } },
    );
  return { subscription: subscriptionFromRow(row), created: false };
}

export async function listSubscriptions(ds: DataSource, scope: Scope): Promise<Subscription[]> {
  const c = companyClause(scope, 3);
  const rows: Record<string, unknown>[] = await ds.query(
    `SELECT * FROM webhook_subscriptions WHERE organization_id = $1 AND sii_env = $2${c.sql} ORDER BY created_at, id`,
    [scope.organizationId, scope.env, ...c.params],
  );
  return rows.map(subscriptionFromRow);
}

export async function getSubscription(ds: DataSource, scope: Scope, id: string): Promise<Subscription> {
  if (!isUuid(id)) notFound();
  const c = companyClause(scope, 4);
  const rows: Record<string, unknown>[] = await ds.query(
    `SELECT * FROM webhook_subscriptions WHERE id = $1 AND organization_id = $2 AND sii_env = $3${c.sql}`,
    [id, scope.organizationId, scope.env, ...c.params],
  );
  if (!rows[0]) notFound();
  return subscriptionFromRow(rows[0]);
}

/**
 * Replaces the secret (stored sealed; a clear one of an older subscription is dropped); attempts
 * read the secret when they sign, so the old one stops at once. Returns the new secret, shown once.
 */
export async function rotateSecret(
  ds: DataSource,
  keys: KeyWrapper,
  scope: Scope,
  id: string,
): Promise<{ subscription: Subscription; secret: string }> {
  if (!isUuid(id)) notFound();
  const { secret, sealed } = await newSealedSecret(keys, id);
  const c = companyClause(scope, 5);
  const res = await ds.query(
    `UPDATE webhook_subscriptions SET secret_sealed = $4, secret = NULL
      WHERE id = $1 AND organization_id = $2 AND sii_env = $3${c.sql} RETURNING *`,
    [id, scope.organizationId, scope.env, sealed, ...c.params],
  );
  const row = (Array.isArray(res[0]) ? res[0][0] : res[0]) as Record<string, unknown> | undefined;
  if (!row) notFound();
  return { subscription: subscriptionFromRow(row), secret };
}

export interface TestDelivery {
  delivery_id: string;
  event_id: string;
  status: 'pending';
}

/**
 * Records a test delivery (dte.status_changed, sii_status TEST, nil dte_id, folio 0), due now;
 * the webhooks service picks it up. 409 webhook_endpoint_disabled when the subscription is
 * inactive, and then nothing is recorded.
 */
export async function enqueueTestDelivery(
  ds: DataSource,
  scope: Scope,
  id: string,
  clock: Clock,
): Promise<TestDelivery> {
  return ds.transaction(async (m) => {
    if (!isUuid(id)) notFound();
    const c = companyClause(scope, 4);
    const rows: Record<string, unknown>[] = await m.query(
      `SELECT * FROM webhook_subscriptions WHERE id = $1 AND organization_id = $2 AND sii_env = $3${c.sql} FOR SHARE`,
      [id, scope.organizationId, scope.env, ...c.params],
    );
    if (!rows[0]) notFound();
    const s = subscriptionFromRow(rows[0]);
    if (!s.active)
      throw new ServiceError(
        'webhook_endpoint_disabled',
        'The webhook endpoint is disabled; register it again.',
        {
          detail: { disabled_reason: s.disabled_reason, disabled_at: s.disabled_at?.toISOString() ?? null },
        },
      );
    const nowMs = clock.now();
    const envelope = buildTestEnvelope(s.sii_env, nowMs);
    const deliveryId = crypto.randomUUID();
    await m.query(
      `INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, payload, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)`,
      [deliveryId, s.id, envelope.id, envelope.type, JSON.stringify(envelope), new Date(nowMs)],
    );
    return { delivery_id: deliveryId, event_id: envelope.id, status: 'pending' as const };
  });
}

/** Deletes the subscription and, by cascade, every delivery record of it. */
export async function deleteSubscription(ds: DataSource, scope: Scope, id: string): Promise<void> {
  if (!isUuid(id)) notFound();
  const c = companyClause(scope, 4);
  const res = await ds.query(
    `DELETE FROM webhook_subscriptions WHERE id = $1 AND organization_id = $2 AND sii_env = $3${c.sql}`,
    [id, scope.organizationId, scope.env, ...c.params],
  );
  const n = Array.isArray(res) && typeof res[1] === 'number' ? res[1] : 0;
  if (n === 0) notFound();
}
