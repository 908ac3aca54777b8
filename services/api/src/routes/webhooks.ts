import type { Context } from 'koa';
import {
  createSubscription,
  deleteSubscription,
  enqueueTestDelivery,
  listSubscriptions,
  publicRecord,
  readTestMode,
  rotateSecret,
  type Resolver,
  type Scope as WebhookScope,
  type UrlPolicy,
} from '@dte/webhooks';
import type { WebhookEventType } from '@dte/status';
import type { ApiDeps, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { enforceNamedLimit } from '../auth/rate-limit';
import { principalOf } from './route-kit';

export interface WebhookRouteOptions {
  /**
   * Which URLs may be registered. By default read from the environment with the webhooks
   * service's own rule: the loopback receiver (WEBHOOKS_ALLOW_LOOPBACK_RECEIVER) is a test-only
   * setting honoured only with NODE_ENV=test; otherwise the api refuses to start.
   */
  policy?: UrlPolicy;
  resolver?: Resolver;
}

const MAX_IDEMPOTENCY_KEY = 255;

/** Test deliveries per subscription: at most 5 a minute (each one is an outbound request). */
export const WEBHOOK_TEST_LIMIT = { max: 5, windowSec: 60 };

function scopeOf(ctx: Context): WebhookScope {
  const p = principalOf(ctx);
  // a company-scoped key sees and manages only its company's subscriptions
  return { organizationId: p.organizationId, env: p.environment, companyId: p.companyId ?? null };
}

function idempotencyKey(ctx: Context): string {
  const key = ctx.get('Idempotency-Key').trim();
  if (!key) throw new ApiError('idempotency_key_missing', 'POST /webhooks needs an Idempotency-Key header.');
  if (key.length > MAX_IDEMPOTENCY_KEY)
    throw new ApiError(
      'validation_failed',
      `Idempotency-Key is longer than ${MAX_IDEMPOTENCY_KEY} characters.`,
      {
        issues: [
          { path: '/headers/Idempotency-Key', message: `must be at most ${MAX_IDEMPOTENCY_KEY} characters` },
        ],
      },
    );
  return key;
}

/**
 * The five /webhooks routes of the spec (Bearer only; webhook:write registers, rotates, tests
 * and deletes, webhook:read lists). A subscription belongs to the organization and environment
 * of the API key; any other answers 404 not_found.
 */
export function webhookRoutes(deps: ApiDeps, now: () => Date, opts: WebhookRouteOptions = {}): RouteDef[] {
  const policy = opts.policy ?? readTestMode(process.env).policy;
  const check = { policy, ...(opts.resolver ? { resolver: opts.resolver } : {}) };
  const ds = deps.dataSource;
  return [
    {
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Register a webhook endpoint (the secret is shown only in this response)',
      tag: 'webhooks',
      auth: 'bearer',
      scope: 'webhook:write',
      body: { kind: 'json', schema: 'webhook-create.schema.json' },
      headers: {
        'Idempotency-Key': 'required; a repeat returns the same subscription (200, without secret)',
      },
      responses: {
        201: {
          description: 'subscription created, with its signing secret',
          schema: 'webhook-with-secret.schema.json',
        },
        200: {
          description: 'the subscription this Idempotency-Key already created',
          schema: 'webhook.schema.json',
        },
      },
      errors: ['idempotency_key_missing', 'idempotency_conflict', 'invalid_webhook_url', 'validation_failed'],
      handler: async (ctx) => {
        const key = idempotencyKey(ctx);
        const body = ctx.state.body as { url: string; events: WebhookEventType[] };
        const { subscription, created, secret } = await createSubscription(
          ds,
          deps.keys,
          scopeOf(ctx),
          { url: body.url, events: body.events, idempotencyKey: key },
          check,
        );
        ctx.status = created ? 201 : 200;
        ctx.body = created ? { ...publicRecord(subscription), secret } : publicRecord(subscription);
      },
    },
    {
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: "List the webhook subscriptions of the API key's environment (no secrets)",
      tag: 'webhooks',
      auth: 'bearer',
      scope: 'webhook:read',
      responses: { 200: { description: 'subscriptions', schema: 'webhook-list.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        const subs = await listSubscriptions(ds, scopeOf(ctx));
        ctx.body = { webhooks: subs.map(publicRecord) };
      },
    },
    {
      method: 'post',
      path: '/webhooks/:id/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret (shown once); the old one stops signing at once',
      tag: 'webhooks',
      auth: 'bearer',
      scope: 'webhook:write',
      responses: { 200: { description: 'the new secret', schema: 'webhook-with-secret.schema.json' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const { subscription, secret } = await rotateSecret(ds, deps.keys, scopeOf(ctx), ctx.params.id!);
        ctx.body = { ...publicRecord(subscription), secret };
      },
    },
    {
      method: 'post',
      path: '/webhooks/:id/test',
      operationId: 'testWebhook',
      summary: 'Enqueue a test delivery (dte.status_changed with sii_status TEST)',
      tag: 'webhooks',
      auth: 'bearer',
      scope: 'webhook:write',
      responses: { 202: { description: 'test delivery enqueued', schema: 'webhook-test.schema.json' } },
      errors: ['not_found', 'webhook_endpoint_disabled', 'rate_limit'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        await enforceNamedLimit(
          deps.redis,
          `webhook-test:${p.organizationId}:${ctx.params.id!}`,
          WEBHOOK_TEST_LIMIT,
          now(),
          'test deliveries for this subscription',
        );
        const t = await enqueueTestDelivery(ds, scopeOf(ctx), ctx.params.id!, { now: () => now().getTime() });
        ctx.status = 202;
        ctx.body = t;
      },
    },
    {
      method: 'delete',
      path: '/webhooks/:id',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook subscription and all its delivery records',
      tag: 'webhooks',
      auth: 'bearer',
      scope: 'webhook:write',
      responses: { 204: { description: 'deleted' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        await deleteSubscription(ds, scopeOf(ctx), ctx.params.id!);
        ctx.status = 204;
      },
    },
  ];
}
