import { expect } from 'chai';
import type { DataSource } from 'typeorm';
import { isServiceError } from '@dte/error-catalog';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { ingestStatus, type DteStatusRecord } from '../src/ingest';
import { randomBytes } from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import { PgWebhookStore, pgOwnerLookup, signingSecret } from '../src/pg-store';
import {
  createSubscription,
  deleteSubscription,
  enqueueTestDelivery,
  getSubscription,
  listSubscriptions,
  rotateSecret,
  type Scope,
} from '../src/subscriptions';
import type { Resolver } from '../src/url-policy';

const publicResolver: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
const check = { policy: { allowLoopback: false }, resolver: publicResolver };
const keys = localKeyWrapper(randomBytes(32).toString('base64'), 'test1');
const ALL = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'] as const;

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isServiceError(err)) return err.code;
    throw err;
  }
  return 'ok';
}

async function newOrg(ds: DataSource, owner: string): Promise<string> {
  const [org] = await ds.query(`INSERT INTO organizations (name) VALUES ('Org') RETURNING id`);
  const [user] = await ds.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [owner]);
  await ds.query(`INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`, [
    user.id,
    org.id,
  ]);
  return org.id as string;
}

describe('webhook persistence on PostgreSQL', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  let ds: DataSource;
  let store: PgWebhookStore;
  let scope: Scope;

  before(async () => {
    db = await migratedDatabase('webhooks');
    ds = db.dataSource;
    store = new PgWebhookStore(ds, keys);
    scope = { organizationId: await newOrg(ds, `owner-${Date.now()}@empresa.test`), env: 'cert' };
  });
  after(async () => db?.cleanup());

  it('creates once per Idempotency-Key, repeats the same subscription, refuses a conflicting reuse', async () => {
    const a = await createSubscription(
      ds,
      keys,
      scope,
      { url: 'https://hooks.example.com/a', events: [...ALL], idempotencyKey: 'k1' },
      check,
    );
    expect(a.created).to.equal(true);
    expect(a.secret).to.match(/^whsec_/);
    const b = await createSubscription(
      ds,
      keys,
      scope,
      { url: 'https://hooks.example.com/a', events: [...ALL].reverse(), idempotencyKey: 'k1' },
      check,
    );
    expect(b).to.deep.include({ created: false });
    expect(b.secret).to.equal(undefined); // shown once
    expect(b.subscription.id).to.equal(a.subscription.id);
    expect(
      await code(
        createSubscription(
          ds,
          keys,
          scope,
          { url: 'https://hooks.example.com/b', events: [...ALL], idempotencyKey: 'k1' },
          check,
        ),
      ),
    ).to.equal('idempotency_conflict');
    expect(
      await code(
        createSubscription(
          ds,
          keys,
          scope,
          { url: 'https://10.0.0.1/', events: [...ALL], idempotencyKey: 'k2' },
          check,
        ),
      ),
    ).to.equal('invalid_webhook_url');
    // same key, other environment: another subscription
    const prod = await createSubscription(
      ds,
      keys,
      { ...scope, env: 'prod' },
      { url: 'https://hooks.example.com/a', events: [...ALL], idempotencyKey: 'k1' },
      check,
    );
    expect(prod.created).to.equal(true);
    expect((await listSubscriptions(ds, scope)).map((s) => s.id)).to.deep.equal([a.subscription.id]);
  });

  it('keeps other organizations and environments out (not_found) and rotates the secret', async () => {
    const { subscription: s, secret: first } = await createSubscription(
      ds,
      keys,
      scope,
      { url: 'https://hooks.example.com/r', events: ['dte.accepted'], idempotencyKey: 'k3' },
      check,
    );
    const other: Scope = { organizationId: await newOrg(ds, `o-${Date.now()}@x.test`), env: 'cert' };
    expect(await code(getSubscription(ds, other, s.id))).to.equal('not_found');
    expect(await code(rotateSecret(ds, keys, { ...scope, env: 'prod' }, s.id))).to.equal('not_found');
    expect(await code(deleteSubscription(ds, other, s.id))).to.equal('not_found');
    expect(await code(enqueueTestDelivery(ds, other, s.id, { now: Date.now }))).to.equal('not_found');
    expect(await code(getSubscription(ds, scope, 'not-a-uuid'))).to.equal('not_found');
    const rotated = await rotateSecret(ds, keys, scope, s.id);
    expect(rotated.secret)
      .to.match(/^whsec_/)
      .and.not.equal(first);
    expect(rotated.subscription.id).to.equal(s.id);
    // what the next attempt signs with is the new secret
    const [row] = await ds.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [s.id]);
    expect(await signingSecret(keys, row)).to.equal(rotated.secret);
  });

  it('stores the signing secret sealed, bound to its subscription; an older clear secret still signs until rotated', async () => {
    const made = await createSubscription(
      ds,
      keys,
      scope,
      {
        url: 'https://hooks.example.com/sealed',
        events: ['dte.accepted'],
        idempotencyKey: 'k-sealed',
      },
      check,
    );
    const [row] = await ds.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [made.subscription.id]);
    expect(row.secret).to.equal(null);
    expect(row.secret_sealed).to.include.keys('v', 'alg', 'kid', 'wk', 'ct');
    expect(JSON.stringify(row.secret_sealed)).to.not.include(made.secret!.slice(6));
    expect(await signingSecret(keys, row)).to.equal(made.secret);
    // the sealed value copied onto another subscription does not open there
    const other = await createSubscription(
      ds,
      keys,
      scope,
      {
        url: 'https://hooks.example.com/other',
        events: ['dte.accepted'],
        idempotencyKey: 'k-other',
      },
      check,
    );
    await ds.query(`UPDATE webhook_subscriptions SET secret_sealed = $2 WHERE id = $1`, [
      other.subscription.id,
      row.secret_sealed,
    ]);
    const [moved] = await ds.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [
      other.subscription.id,
    ]);
    const err = await signingSecret(keys, moved).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error).with.property('name', 'KmsAuthError');
    // a subscription made before secrets were sealed keeps signing with its clear secret ...
    await ds.query(
      `UPDATE webhook_subscriptions SET secret = 'whsec_legacy', secret_sealed = NULL WHERE id = $1`,
      [other.subscription.id],
    );
    const [legacy] = await ds.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [
      other.subscription.id,
    ]);
    expect(await signingSecret(keys, legacy)).to.equal('whsec_legacy');
    // ... and its rotation drops the clear one
    const rotated = await rotateSecret(ds, keys, scope, other.subscription.id);
    const [after] = await ds.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [
      other.subscription.id,
    ]);
    expect(after.secret).to.equal(null);
    expect(await signingSecret(keys, after)).to.equal(rotated.secret);
    // a row with neither is refused by the database
    const none = await ds
      .query(`UPDATE webhook_subscriptions SET secret = NULL, secret_sealed = NULL WHERE id = $1`, [
        other.subscription.id,
      ])
      .catch((e: unknown) => e);
    expect(String(none)).to.match(/webhook_subscriptions_secret_present/);
  });

  it('turns status records into deliveries once, runs the attempt state machine, deactivates at three', async () => {
    const { subscription: s } = await createSubscription(
      ds,
      keys,
      scope,
      { url: 'https://hooks.example.com/sm', events: [...ALL], idempotencyKey: 'k4' },
      check,
    );
    const rec: DteStatusRecord = {
      event_id: crypto.randomUUID(),
      dte_id: crypto.randomUUID(),
      organization_id: scope.organizationId,
      sii_env: 'cert',
      tipo_dte: 33,
      folio: 9,
      sii_status: 'RCH',
      track_id: 'T1',
      observed_at: new Date().toISOString(),
      source: 'test',
    };
    const clock = { now: () => Date.now() };
    const due = await ingestStatus(rec, store, clock);
    // three events for each of the active cert subscriptions subscribed to them (k1, k4; k3 wants accepted only)
    const mine = due.filter((d) => d.subscription_id === s.id);
    expect(mine).to.have.length(3);
    expect(await ingestStatus(rec, store, clock)).to.deep.equal([]);
    const [n] = await ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`,
      [s.id],
    );
    expect(n.n).to.equal(3);

    const now = new Date();
    const lease = new Date(now.getTime() + 10_000);
    const first = mine[0]!;
    const c = await store.claimAttempt(first.delivery_id, 1, now, lease);
    expect(c?.subscription.id).to.equal(s.id);
    expect(await store.claimAttempt(first.delivery_id, 1, now, lease)).to.equal(null); // held
    await store.markRetry(first.delivery_id, 1, now, new Date(now.getTime() + 60_000), {
      status: 500,
      error: 'http_500',
    });
    expect(await store.claimAttempt(first.delivery_id, 2, now, lease)).to.equal(null); // not due yet
    const overdue = await store.findOverdue({
      firstBefore: now,
      retryBefore: new Date(now.getTime() + 120_000),
      now,
      limit: 10,
    });
    expect(overdue.find((o) => o.delivery_id === first.delivery_id)?.attempt).to.equal(2);

    // three exhaustions at once: exactly one of them deactivates
    const results = await Promise.all(
      mine.map(async (d) => {
        const later = new Date(now.getTime() + 61_000);
        const attempt = d.delivery_id === first.delivery_id ? 2 : 1;
        expect(
          await store.claimAttempt(d.delivery_id, attempt, later, new Date(later.getTime() + 10_000)),
        ).to.not.equal(null);
        return store.markExhausted(
          d.delivery_id,
          attempt,
          later,
          { status: null, error: 'timeout' },
          {
            countsTowardsDisable: true,
            disableAfter: 3,
            disabledReason: 'consecutive_exhausted_deliveries',
          },
        );
      }),
    );
    expect(results.filter((r) => r.disabledNow)).to.have.length(1);
    const after = await getSubscription(ds, scope, s.id);
    expect(after).to.include({
      active: false,
      disabled_reason: 'consecutive_exhausted_deliveries',
      consecutive_exhausted: 3,
    });
    expect(await code(enqueueTestDelivery(ds, scope, s.id, clock))).to.equal('webhook_endpoint_disabled');
    const [m] = await ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`,
      [s.id],
    );
    expect(m.n).to.equal(3);
    expect(await pgOwnerLookup(ds)(scope.organizationId)).to.match(/^owner-\d+@empresa\.test$/);

    // retention: the terminal records go after the period, pending ones never
    expect(await store.purgeTerminal(new Date(now.getTime() - 1000))).to.equal(0);
    expect(await store.purgeTerminal(new Date(now.getTime() + 90 * 86_400_000))).to.be.at.least(3);
  });

  it('the overdue sweep never waits for a row another statement holds (a claim or mark in flight): it takes and gives back the others', async () => {
    const { subscription: s } = await createSubscription(
      ds,
      keys,
      scope,
      { url: 'https://hooks.example.com/sweep', events: [...ALL], idempotencyKey: 'k-sweep' },
      check,
    );
    const due = await ingestStatus(
      {
        event_id: crypto.randomUUID(),
        dte_id: crypto.randomUUID(),
        organization_id: scope.organizationId,
        sii_env: 'cert',
        tipo_dte: 33,
        folio: 11,
        sii_status: 'EPR',
        track_id: 'T11',
        observed_at: new Date().toISOString(),
        source: 'test',
      },
      store,
      { now: () => Date.now() },
    );
    const mine = due.filter((d) => d.subscription_id === s.id).map((d) => d.delivery_id);
    expect(mine).to.have.length(3);
    const [held, ...others] = mine as [string, ...string[]];
    // another connection holds one row locked (as a round's claim or mark does while it runs)
    const other = ds.createQueryRunner();
    await other.connect();
    await other.startTransaction();
    try {
      await other.query(`SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE`, [held]);
      const now = new Date(Date.now() + 5_000);
      const overdue = await store.findOverdue({
        firstBefore: now,
        retryBefore: now,
        now,
        limit: 100,
        queuedUntil: new Date(now.getTime() + 120_000),
      });
      const found = overdue.map((o) => o.delivery_id).filter((id) => mine.includes(id));
      expect(found.sort()).to.deep.equal([...others].sort());
      // giving back skips the held row too, and frees the others
      await store.releaseQueued([held, ...others]);
      const rows: { id: string; queued: boolean }[] = await ds.query(
        `SELECT id, queued_until IS NOT NULL AS queued FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
        [mine],
      );
      expect(rows.every((r) => !r.queued)).to.equal(true);
    } finally {
      await other.rollbackTransaction();
      await other.release();
    }
  });

  it('records a test delivery and deletes a subscription with all its delivery records', async () => {
    const { subscription: s } = await createSubscription(
      ds,
      keys,
      scope,
      { url: 'https://hooks.example.com/t', events: ['dte.emitted'], idempotencyKey: 'k5' },
      check,
    );
    const t = await enqueueTestDelivery(ds, scope, s.id, { now: Date.now });
    expect(t.status).to.equal('pending');
    expect(t.event_id).to.match(/^evt_[0-9a-f-]{36}$/);
    const [row] = await ds.query(`SELECT * FROM webhook_deliveries WHERE id = $1`, [t.delivery_id]);
    const env = JSON.parse(row.payload);
    expect(env).to.deep.include({ id: t.event_id, type: 'dte.status_changed' });
    expect(env.data).to.deep.include({
      dte_id: '00000000-0000-0000-0000-000000000000',
      folio: 0,
      sii_status: 'TEST',
      terminal: false,
      accion: 'contactar_soporte',
    });
    await deleteSubscription(ds, scope, s.id);
    const [n] = await ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`,
      [s.id],
    );
    expect(n.n).to.equal(0);
    expect(await code(getSubscription(ds, scope, s.id))).to.equal('not_found');
  });
});
