/**
 * Deliveries per second to a local https receiver, through the real delivery core: URL check and
 * pinned connection, signing, POST, and the PostgreSQL store's claim and completion per attempt.
 *
 *   npx tsx services/webhooks/bench/deliveries.ts [deliveries=2000] [endpoints=20] [concurrency=64]
 *
 * Uses the test stack's PostgreSQL (a fresh schema, dropped at the end). Prints one line per run.
 */
import crypto from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import { migratedDatabase } from '../../../test/support/env';
import { systemClock } from '../src/clock';
import { Dispatcher } from '../src/dispatcher';
import { PgWebhookStore } from '../src/pg-store';
import { DeliveryRunner } from '../src/runner';
import { TimerScheduler } from '../src/scheduler';
import { createSubscription } from '../src/subscriptions';
import { Receiver } from '../test/support/receiver';
import { makeTestPki } from '../test/support/test-ca';

async function main() {
  const [n = 2000, endpoints = 20, concurrency = 64] = process.argv.slice(2).map(Number);
  const db = await migratedDatabase('webhooks_bench');
  const ds = db.dataSource;
  const keys = localKeyWrapper(crypto.randomBytes(32).toString('base64'), 'bench1');
  const pki = makeTestPki(['127.0.0.1']);
  const rx = await new Receiver(pki).start();
  try {
    const [org] = await ds.query(`INSERT INTO organizations (name) VALUES ('bench') RETURNING id`);
    const subs: string[] = [];
    for (let i = 0; i < endpoints; i++) {
      // as the api makes them: the signing secret sealed, opened by every attempt
      const { subscription } = await createSubscription(
        ds,
        keys,
        { organizationId: org.id, env: 'cert' },
        { url: rx.url(`/e${i}`), events: ['dte.status_changed'], idempotencyKey: `bench-${i}` },
        { policy: { allowLoopback: true } },
      );
      subs.push(subscription.id);
    }
    const payload = JSON.stringify({
      id: `evt_${crypto.randomUUID()}`,
      type: 'dte.status_changed',
      data: {},
    });
    const ids: { id: string; sub: string }[] = [];
    for (let i = 0; i < n; i += 500) {
      const batch = Array.from({ length: Math.min(500, n - i) }, (_, j) => ({
        id: crypto.randomUUID(),
        sub: subs[(i + j) % endpoints]!,
      }));
      await ds.query(
        `INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, payload, next_attempt_at, created_at)
         SELECT x.id, x.sub, 'evt_' || x.id, 'dte.status_changed', $2, now(), now()
           FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, sub uuid)`,
        [JSON.stringify(batch), payload],
      );
      ids.push(...batch);
    }
    const store = new PgWebhookStore(ds, keys);
    const holder: { runner?: DeliveryRunner } = {};
    const dispatcher = new Dispatcher({
      store,
      clock: systemClock,
      plan: { delaysMs: [60_000, 60_000, 60_000, 60_000] },
      scheduler: new TimerScheduler(systemClock, (a) => holder.runner!.enqueue(a)),
      notifier: { endpointDisabled: async () => undefined },
      post: { policy: { allowLoopback: true }, timeoutMs: 10_000, ca: [pki.caCertPem] },
      disableAfter: 3,
      leaseMs: 40_000,
    });
    const runner = new DeliveryRunner(dispatcher, store, systemClock, {
      concurrency,
      perEndpoint: Math.max(1, Math.ceil(concurrency / endpoints)),
    });
    holder.runner = runner;
    const started = process.hrtime.bigint();
    for (const d of ids)
      runner.enqueue({ event_id: d.id, delivery_id: d.id, subscription_id: d.sub, attempt: 1, due_at: '' });
    await runner.idle();
    const secs = Number(process.hrtime.bigint() - started) / 1e9;
    const [done] = await ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'delivered'`,
    );
    console.log(
      `deliveries=${n} endpoints=${endpoints} concurrency=${concurrency} delivered=${done.n} ` +
        `received=${rx.received.length} seconds=${secs.toFixed(2)} deliveries_per_second=${(done.n / secs).toFixed(0)}`,
    );
  } finally {
    await rx.close();
    await db.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
