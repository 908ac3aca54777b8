import { expect } from 'chai';
import crypto, { randomBytes } from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import { migratedDatabase } from '../../../test/support/env';
import { systemClock } from '../src/clock';
import { Dispatcher, type Poster } from '../src/dispatcher';
import { ingestStatuses } from '../src/ingest';
import type { Subscription } from '../src/model';
import { PgWebhookStore } from '../src/pg-store';
import { DeliveryRunner } from '../src/runner';
import { TimerScheduler } from '../src/scheduler';
import { SIGNATURE_HEADER, verifySignature } from '../src/signature';
import { createSubscription, rotateSecret } from '../src/subscriptions';
import type { Resolver } from '../src/url-policy';
import { countQueries } from './support/counted-queries';

const publicResolver: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
const keys = localKeyWrapper(randomBytes(32).toString('base64'), 'test1');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The delivery pool on PostgreSQL: when an attempt starts, the claims of its endpoint's next
 * waiting attempts go out with it (one statement with the delivered marks of the attempts that
 * just ended), so a busy endpoint costs far less than a statement per delivery; every delivery is
 * still sent once, within the endpoint's concurrency, and recorded on its own row.
 */
describe('webhook attempts claimed ahead (PostgreSQL)', function () {
  this.timeout(120_000);
  let db: Awaited<ReturnType<typeof migratedDatabase>>;
  let org: string;
  const subs: Subscription[] = [];
  const secrets = new Map<string, string>();

  before(async () => {
    db = await migratedDatabase('webhooks_claim_ahead');
    [{ id: org }] = await db.dataSource.query(`INSERT INTO organizations (name) VALUES ('Org') RETURNING id`);
    for (const label of ['a', 'b']) {
      const { subscription, secret } = await createSubscription(
        db.dataSource,
        keys,
        { organizationId: org, env: 'cert' },
        {
          url: `https://hooks.example.com/${label}`,
          events: ['dte.emitted', 'dte.status_changed', 'dte.accepted'],
          idempotencyKey: label,
        },
        { policy: { allowLoopback: false }, resolver: publicResolver },
      );
      subs.push(subscription);
      secrets.set(subscription.id, secret!);
    }
  });
  after(async () => {
    await db?.cleanup();
  });

  /** `n` documents accepted at once: 3 deliveries each to each subscription */
  async function accepted(n: number) {
    return ingestStatuses(
      Array.from({ length: n }, (_, i) => ({
        event_id: crypto.randomUUID(),
        dte_id: crypto.randomUUID(),
        organization_id: org,
        sii_env: 'cert' as const,
        tipo_dte: 33,
        folio: 1000 + i,
        sii_status: 'EPR',
        track_id: `T${i}`,
        observed_at: new Date().toISOString(),
        source: 'test',
      })),
      new PgWebhookStore(db.dataSource, keys),
      systemClock,
    );
  }

  /** a receiver that answers 200 after `ms`, remembering what came and how many were in flight per endpoint */
  function receiver(ms: number) {
    const got: { url: string; id: string; signed: boolean }[] = [];
    const inFlight = new Map<string, number>();
    let peak = 0;
    const post: Poster = async (url, body, headers) => {
      const now = (inFlight.get(url) ?? 0) + 1;
      inFlight.set(url, now);
      peak = Math.max(peak, now);
      await sleep(ms);
      inFlight.set(url, inFlight.get(url)! - 1);
      const sub = subs.find((s) => s.url === url)!;
      got.push({
        url,
        id: JSON.parse(body).id as string,
        signed: verifySignature(secrets.get(sub.id)!, body, headers[SIGNATURE_HEADER]!, Date.now()),
      });
      return { ok: true, status: 200, durationMs: ms };
    };
    return { post, got, peak: () => peak };
  }

  function pool(post: Poster, o: { perEndpoint: number; leaseMs: number; claimAheadMaxAgeMs?: number }) {
    const statements = countQueries(db.dataSource);
    const store = new PgWebhookStore(statements.counted, keys);
    const holder: { runner?: DeliveryRunner } = {};
    const scheduler = new TimerScheduler(systemClock, (a) => holder.runner!.enqueue(a));
    const dispatcher = new Dispatcher({
      store,
      clock: systemClock,
      plan: { delaysMs: [60_000] },
      scheduler,
      notifier: { endpointDisabled: async () => undefined },
      post,
      disableAfter: 3,
      leaseMs: o.leaseMs,
      ...(o.claimAheadMaxAgeMs !== undefined ? { claimAheadMaxAgeMs: o.claimAheadMaxAgeMs } : {}),
    });
    const runner = new DeliveryRunner(dispatcher, store, systemClock, {
      concurrency: 16,
      perEndpoint: o.perEndpoint,
      onError: (err) => console.error(err),
    });
    holder.runner = runner;
    return { runner, scheduler, statements: statements.count };
  }

  async function rowsOf(ids: string[]) {
    return (await db.dataSource.query(
      `SELECT state, attempts, last_status, count(*)::int AS n FROM webhook_deliveries
        WHERE id = ANY($1::uuid[]) GROUP BY 1, 2, 3`,
      [ids],
    )) as { state: string; attempts: number; last_status: number | null; n: number }[];
  }

  it('a busy endpoint gets each delivery once, signed, never more in flight than its limit, in a statement per several deliveries', async () => {
    const due = await accepted(20); // 60 deliveries to each of the two endpoints
    expect(due).to.have.length(120);
    const rx = receiver(5);
    const p = pool(rx.post, { perEndpoint: 2, leaseMs: 60_000 });
    for (const d of due) p.runner.enqueue(d);
    await p.runner.idle();
    p.scheduler.close();

    expect(rx.got).to.have.length(120);
    expect(new Set(rx.got.map((g) => `${g.url} ${g.id}`)).size).to.equal(120);
    expect(rx.got.every((g) => g.signed)).to.equal(true);
    expect(rx.peak()).to.be.at.most(2);
    expect(await rowsOf(due.map((d) => d.delivery_id))).to.deep.equal([
      { state: 'delivered', attempts: 1, last_status: 200, n: 120 },
    ]);
    // a claim and a mark per delivery were two statements each; now they share, and with claims
    // made 4 slots deep and the marks lingering for company, one statement serves many deliveries
    // (9 for these 120 on a quiet machine)
    expect(p.statements()).to.be.below(30);
  });

  it('an attempt claimed ahead too long ago is claimed again when it starts (its lease renewed, its secret read again), and still sent once', async () => {
    const due = await accepted(2); // 6 deliveries to each endpoint
    const rx = receiver(60);
    // one at a time per endpoint, each takes 60 ms: the claims made ahead are older than 30 ms
    // when their attempts start
    const p = pool(rx.post, { perEndpoint: 1, leaseMs: 60_000, claimAheadMaxAgeMs: 30 });
    for (const d of due) p.runner.enqueue(d);
    await p.runner.idle();
    p.scheduler.close();
    expect(rx.got).to.have.length(12);
    expect(new Set(rx.got.map((g) => `${g.url} ${g.id}`)).size).to.equal(12);
    expect(rx.got.every((g) => g.signed)).to.equal(true);
    expect(await rowsOf(due.map((d) => d.delivery_id))).to.deep.equal([
      { state: 'delivered', attempts: 1, last_status: 200, n: 12 },
    ]);
  });

  it('a secret rotated while attempts wait signs every attempt that starts after it, claims made ahead included (claimed again once older than claimAheadMaxAgeMs)', async () => {
    const due = await accepted(2); // 6 deliveries to each endpoint
    const sub = subs[0]!;
    const old = secrets.get(sub.id)!;
    const calls: { url: string; at: number; body: string; signature: string }[] = [];
    // one at a time per endpoint, 60 ms each: its next attempts wait, claimed ahead
    const post: Poster = async (url, body, headers) => {
      calls.push({ url, at: Date.now(), body, signature: headers[SIGNATURE_HEADER]! });
      await sleep(60);
      return { ok: true, status: 200, durationMs: 60 };
    };
    const p = pool(post, { perEndpoint: 1, leaseMs: 60_000, claimAheadMaxAgeMs: 30 });
    for (const d of due) p.runner.enqueue(d);
    while (calls.filter((c) => c.url === sub.url).length < 2) await sleep(5);
    const rotated = await rotateSecret(db.dataSource, keys, { organizationId: org, env: 'cert' }, sub.id);
    secrets.set(sub.id, rotated.secret);
    const rotatedAt = Date.now();
    await p.runner.idle();
    p.scheduler.close();
    const mine = calls.filter((c) => c.url === sub.url);
    expect(mine).to.have.length(6);
    // a POST that began well after the rotation committed carries the new secret, never the old
    const after = mine.filter((c) => c.at > rotatedAt + 20);
    expect(after.length).to.be.at.least(2);
    for (const c of after) {
      expect(verifySignature(rotated.secret, c.body, c.signature, Date.now()), 'new secret').to.equal(true);
      expect(verifySignature(old, c.body, c.signature, Date.now()), 'old secret').to.equal(false);
    }
  });

  it('a lease is renewed only by its holder: once it lapsed and another worker claimed the attempt, the old holder gets nothing', async () => {
    const [d] = await accepted(1);
    const mine = new PgWebhookStore(db.dataSource, keys);
    const other = new PgWebhookStore(db.dataSource, keys);
    const t0 = Date.now();
    const l1 = new Date(t0 + 1000);
    expect(await mine.claimAttempt(d!.delivery_id, 1, new Date(t0), l1)).to.not.equal(null);
    // held: nobody else claims it, and the holder renews it
    expect(await other.claimAttempt(d!.delivery_id, 1, new Date(t0 + 10), new Date(t0 + 2000))).to.equal(
      null,
    );
    const l2 = new Date(t0 + 1500);
    expect(await mine.claimAttempt(d!.delivery_id, 1, new Date(t0 + 20), l2, l1)).to.not.equal(null);
    // lapsed and taken by the other worker: the old lease renews nothing
    const l3 = new Date(t0 + 9000);
    expect(await other.claimAttempt(d!.delivery_id, 1, new Date(t0 + 1600), l3)).to.not.equal(null);
    expect(await mine.claimAttempt(d!.delivery_id, 1, new Date(t0 + 1700), new Date(t0 + 5000), l2)).to.equal(
      null,
    );
    const [row] = await db.dataSource.query(`SELECT lease_until FROM webhook_deliveries WHERE id = $1`, [
      d!.delivery_id,
    ]);
    expect((row.lease_until as Date).getTime()).to.equal(l3.getTime());
  });
});
