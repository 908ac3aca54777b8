/**
 * CPU per delivery of the delivery side alone, as bench:pipeline runs it (one endpoint, 4 attempts
 * in flight): the real DeliveryRunner, Dispatcher, PostgreSQL store (claims and delivered marks),
 * URL check, signing and HTTP client of this process, and the PostgreSQL backends serving it, with
 * the receiver in a child process (its CPU is not counted) and the production trust path (the
 * receiver's test CA through NODE_EXTRA_CA_CERTS, no `ca` option). Deliveries are inserted first
 * (a fresh schema of the test stack, dropped at the end), then run; prints one line.
 *
 *   npx tsx services/webhooks/bench/attempt-cpu.ts [deliveries=4000] [endpoints=1] [perEndpoint=4]
 */
import { fork, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import { ownBackends } from '../../../scripts/bench/process-cpu';
import { migratedDatabase } from '../../../test/support/env';
import { systemClock } from '../src/clock';
import { Dispatcher } from '../src/dispatcher';
import { buildEnvelope } from '../src/envelope';
import { closeDeliveryAgents } from '../src/http-delivery';
import { PgWebhookStore } from '../src/pg-store';
import { CLAIM_AHEAD_PER_SLOT, DeliveryRunner } from '../src/runner';
import { TimerScheduler } from '../src/scheduler';
import { createSubscription } from '../src/subscriptions';
import { makeTestPki, type TestPki } from '../test/support/test-ca';

const ROLE = process.env.ATTEMPT_CPU_ROLE;

async function receiver() {
  const { Receiver } = await import('../test/support/receiver');
  const rx = await new Receiver(JSON.parse(process.env.ATTEMPT_CPU_PKI!) as TestPki).start();
  rx.received.push = () => 0; // answer only, keep nothing
  process.send!({ url: rx.url('/bench') });
}

function parent() {
  const pki = makeTestPki(['127.0.0.1']);
  const child = fork(process.argv[1]!, [], {
    env: { ...process.env, ATTEMPT_CPU_ROLE: 'receiver', ATTEMPT_CPU_PKI: JSON.stringify(pki) },
    execArgv: process.execArgv,
  });
  child.once('message', (m: { url: string }) => {
    const run = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      env: {
        ...process.env,
        ATTEMPT_CPU_ROLE: 'worker',
        ATTEMPT_CPU_URL: m.url,
        NODE_EXTRA_CA_CERTS: pki.caFile,
      },
      stdio: 'inherit',
    });
    child.kill();
    process.exit(run.status ?? 1);
  });
}

async function worker() {
  const [n = 4000, endpoints = 1, perEndpoint = 4, claimAhead = perEndpoint * CLAIM_AHEAD_PER_SLOT] =
    process.argv.slice(2).map(Number);
  const url = process.env.ATTEMPT_CPU_URL!;
  const db = await migratedDatabase('webhooks_attempt_cpu');
  const ds = db.dataSource;
  const keys = localKeyWrapper(crypto.randomBytes(32).toString('base64'), 'bench1');
  try {
    const [org] = await ds.query(`INSERT INTO organizations (name) VALUES ('bench') RETURNING id`);
    const subs: string[] = [];
    for (let i = 0; i < endpoints; i++) {
      const { subscription } = await createSubscription(
        ds,
        keys,
        { organizationId: org.id, env: 'cert' },
        { url: `${url}/e${i}`, events: ['dte.status_changed'], idempotencyKey: `bench-${i}` },
        { policy: { allowLoopback: true } },
      );
      subs.push(subscription.id);
    }
    const insert = async (count: number) => {
      const ids: { id: string; sub: string }[] = [];
      for (let i = 0; i < count; i += 500) {
        const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
          id: crypto.randomUUID(),
          sub: subs[(i + j) % endpoints]!,
          payload: JSON.stringify(
            buildEnvelope(
              `evt_${crypto.randomUUID()}`,
              'dte.status_changed',
              {
                dte_id: crypto.randomUUID(),
                tipo_dte: 33,
                folio: i + j + 1,
                sii_status: 'EPR',
                sii_env: 'cert',
                observed_at: new Date().toISOString(),
              },
              Date.now(),
            ),
          ),
        }));
        await ds.query(
          `INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, payload, next_attempt_at, created_at)
           SELECT x.id, x.sub, 'evt_' || x.id, 'dte.status_changed', x.payload, now(), now()
             FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, sub uuid, payload text)`,
          [JSON.stringify(batch)],
        );
        ids.push(...batch);
      }
      return ids;
    };
    const store = new PgWebhookStore(ds, keys);
    const holder: { runner?: DeliveryRunner } = {};
    const dispatcher = new Dispatcher({
      store,
      clock: systemClock,
      plan: { delaysMs: [60_000, 60_000, 60_000, 60_000] },
      scheduler: new TimerScheduler(systemClock, (a) => holder.runner!.enqueue(a)),
      notifier: { endpointDisabled: async () => undefined },
      post: { policy: { allowLoopback: true }, timeoutMs: 10_000 },
      disableAfter: 3,
      leaseMs: 40_000,
      claimAheadMaxAgeMs: 20_000,
    });
    const runner = new DeliveryRunner(dispatcher, store, systemClock, {
      concurrency: 64,
      perEndpoint,
      claimAhead,
    });
    holder.runner = runner;
    const runAll = async (ids: { id: string; sub: string }[]) => {
      for (const d of ids)
        runner.enqueue({
          event_id: d.id,
          delivery_id: d.id,
          subscription_id: d.sub,
          attempt: 1,
          due_at: '',
          organization_id: org.id,
        });
      await runner.idle();
    };
    await runAll(await insert(200)); // warm-up: connections, JIT, the signing key
    const ids = await insert(n);
    // the backends of this process's pool connections, by their client ports
    const { pids: backends, cpuSeconds: pgCpu } = await ownBackends(ds, process.env.DATABASE_URL!);
    // statements sent from here on (the store's, through ds.query)
    let statements = 0;
    const query = ds.query.bind(ds);
    ds.query = ((...args: Parameters<typeof ds.query>) => (statements++, query(...args))) as typeof ds.query;
    const pg0 = pgCpu();
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await runAll(ids);
    const cpu = process.cpuUsage(cpu0);
    const pg = pgCpu() - pg0;
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    ds.query = query;
    const [done] = await ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'delivered'`,
    );
    console.log(
      `attempt-cpu: deliveries=${n} endpoints=${endpoints} perEndpoint=${perEndpoint} delivered=${done.n - 200} ` +
        `seconds=${secs.toFixed(2)} per delivery: this process ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms, ` +
        `its PostgreSQL backends (${backends.length}) ${((pg * 1000) / n).toFixed(3)} ms, ` +
        `${(statements / n).toFixed(3)} statements`,
    );
  } finally {
    closeDeliveryAgents();
    await db.cleanup();
  }
}

if (ROLE === 'receiver') void receiver();
else if (ROLE === 'worker')
  worker().catch((err) => {
    console.error(err);
    process.exit(1);
  });
else parent();
