/**
 * Benchmark of the emission pipeline (issues 6 and 13): documents per second from POST /dtes to
 * the SII's EPR, POST /dtes latency, and where the CPU goes, per document and per process, with
 * the api, signer, sii-uploader and sii-poller as real processes and the SII simulator as a
 * process, on the local stack (a schema and topic prefix of its own), and the webhooks service
 * delivering every event of those documents to an https receiver in the bench. Prints figures
 * beside their configuration; asserts nothing about time.
 *
 *   npm run bench:pipeline                                  # closed loop, 8 clients
 *   BENCH_MODE=open BENCH_RATE=100 npm run bench:pipeline   # open loop, 100 POST/s on schedule
 *
 * BENCH_MODE closed | open. closed: BENCH_CONCURRENCY clients (8) each sends its next POST when
 * the last one answered. open: one POST every 1/BENCH_RATE s (100/s) on a fixed schedule whatever
 * the answers (latency counted from the scheduled instant, so a slow server is not hidden by a
 * slow client). BENCH_DOCS (3000, the issue's count), BENCH_WARMUP (1000 documents, see WARMUP), BENCH_TYPES (33).
 * By default the bench measures the deployment `npm start` runs (issue 27): the services' own
 * defaults for the uploader and the poller (BENCH_BATCH = UPLOAD_MAX_DOCS, BENCH_BATCH_WAIT_MS =
 * UPLOAD_MAX_WAIT_MS override them; BENCH_POLL=fast the quick poll schedule of the sittings before
 * issue 27), the simulator's timings of npm start (BENCH_SIM_REGISTER_MS 2000, BENCH_SIM_STEP_MS
 * 1000; 0/0 answers the verdict at once; 30000/10000 is the slow-SII profile), BENCH_PARTITIONS (2),
 * BENCH_REPLICAS (e.g. signer=2,sii-uploader=2: processes of a worker in one consumer group; the
 * api stays one), BENCH_API_PIPELINE inline | separate (inline, as npm start and the Helm chart run
 * it: ARCHITECTURE.md "Where the relay and the projector run"): separate puts the api's outbox
 * relay and dte-status projector in a process of their own (services/api/src/pipeline-main.ts,
 * the HTTP api with API_PIPELINE=off), so their CPU is told apart from the HTTP path's.
 * BENCH_IDLE_S (10): seconds of the warm, idle pipeline measured before the window; each
 * process's idle CPU per second times the window is subtracted in the "net of idle" column.
 * BENCH_RCV_SYNC=0 leaves out services/rcv-sync, which npm start runs (it reads every dte-status
 * record; its CPU is printed with the others).
 * BENCH_WEBHOOKS unsubscribed | 1 | 0 (unsubscribed: the deployment `npm start` brings up, below)
 * BENCH_WEBHOOKS=1: services/webhooks as a process (test/support/pipeline-harness.ts
 * withWebhooks) and, in the bench, an https receiver on loopback (a throw-away CA: makeTestPki,
 * Receiver of services/webhooks/test/support; it answers 200 at once) registered through the api's
 * POST /webhooks for BENCH_WEBHOOK_EVENTS (all four: dte.emitted,dte.status_changed,dte.accepted,
 * dte.rejected, what an integrator following every document takes). A loopback receiver is a
 * test-only setting, so with webhooks on every service gets NODE_ENV=test and
 * WEBHOOKS_ALLOW_LOOPBACK_RECEIVER=true (the api checks the URL at POST /webhooks; nothing else
 * reads NODE_ENV). BENCH_WEBHOOKS_TRUST says how the webhooks process trusts the receiver's
 * test CA: extra-ca (default) NODE_EXTRA_CA_CERTS=<ca>, so the service runs its production path
 * (no `ca` option: system roots); test-ca WEBHOOKS_TEST_CA_FILE=<ca>, as the tests do, which
 * makes every attempt hash the ~140 system roots plus the test CA into its agent key and makes
 * https.Agent join them into its pool name (about a quarter of the service's CPU in a profile,
 * a cost production never pays). After the last EPR the bench
 * waits (at most 120 s) until every measured document's terminal delivery (dte.accepted or
 * status_changed EPR) arrived and the subscription has no pending delivery, and prints the
 * deliveries received, per document, POST → dte.accepted delivery p50/p99 and EPR observed →
 * dte.accepted delivery p50/p99. BENCH_WEBHOOKS=0 runs the pipeline without them.
 * BENCH_WEBHOOKS=unsubscribed runs the webhooks service with no subscription, as a deployment
 * that has not registered one yet (what `npm start` brings up): it still reads every dte-status
 * record (and records nothing for an organization without a subscription); the window closes once
 * its consumer group has no lag, and the bench's environment stays production (no NODE_ENV=test).
 * BENCH_NICE=<n> (0): after the warm-up, every process but the api (HTTP) and the PostgreSQL
 * backends serving them run at nice n: on one shared host the batch side (relay, projector,
 * signer, uploader, poller, webhooks, the simulator) yields the CPU to the latency-bound api, as
 * separate pods with their own CPU would (needs root to renice PostgreSQL's backends).
 * BENCH_ENV_<NAME>=<value> gives NAME=value to every service (e.g. BENCH_ENV_NODE_OPTIONS="--import
 * ./scripts/bench/cpu-profile.mjs" with BENCH_ENV_CPU_PROFILE_DIR=/tmp/prof writes a CPU profile
 * of each service when the run ends).
 *
 * CPU: /proc/<pid>/stat of each service process (the simulator's with its children: ended xmllint
 * runs, and the live resident schema validator), of the PostgreSQL backends serving it (matched
 * by client port in pg_stat_activity), of PostgreSQL's own processes (WAL writer, checkpointer …),
 * of the Kafka broker, of the schema registry and of Redis (found by their ports). Kafka, the
 * registry, Redis and PostgreSQL's own processes are shared with whatever else runs on the stack: their figures are an
 * upper bound of this run's share. The window opens at the first measured POST and closes at the
 * last EPR, or with webhooks on when the deliveries of the measured documents are all in (the
 * "delivery tail" after the last EPR, printed), so every line, the webhooks' included, counts the
 * whole work those documents caused. The receiver's TLS and parsing are the bench client's CPU.
 * The machine's speed is printed beside (scripts/bench/machine-yardstick.ts: CPU ms per RSA-2048
 * signature before the window opens and after it closes): on a shared VM the same code costs up to
 * a third more in a slow phase, and two runs compare only at equal speed.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  SERVICES,
  ServiceProcess,
  emissionBody,
  percentile,
  startPipelineProcesses,
  type ServiceName,
} from '../test/support/pipeline-harness';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { PIPELINE_TOPICS } from '@dte/messaging';
import { consumerGroupLag } from '../packages/messaging/src/lag';
import { STATUS_GROUP } from '../services/webhooks/src/kafka-side';
import { rsaSignatureMs } from './bench/machine-yardstick';
import { testStack } from '../test/support/env';
import { makeTestPki } from '../services/webhooks/test/support/test-ca';
import { Receiver } from '../services/webhooks/test/support/receiver';
import {
  CpuAccount,
  backendsOf,
  childrenOf,
  parentOf,
  pidListeningOn,
  postgresAuxiliary,
  type BackendQuery,
} from './bench/process-cpu';
import { runMain } from './bench/run-main';
import { DEFAULT_INTERMEDIATES } from '@dte/sii-simulator';

const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const MODE = process.env.BENCH_MODE === 'open' ? 'open' : 'closed';
const DOCS = num('BENCH_DOCS', 3000);
const CONCURRENCY = num('BENCH_CONCURRENCY', 8);
const RATE = num('BENCH_RATE', 100);
/** BENCH_NICE=10: the nice value of every process but the api (HTTP) and of their PostgreSQL backends */
const NICE = num('BENCH_NICE', 0);
const TYPES = (process.env.BENCH_TYPES ?? '33').split(',').map(Number) as (33 | 34 | 52 | 61)[];
/** the uploader's and the poller's settings are the services' defaults (as npm start runs them) unless given */
const BATCH = process.env.BENCH_BATCH;
const BATCH_WAIT_MS = process.env.BENCH_BATCH_WAIT_MS;
/** BENCH_POLL=fast: the quick poll schedule of the sittings before issue 27 (first 300 ms, 250 ms ×1.5 up to 1 s) */
const FAST_POLL = process.env.BENCH_POLL === 'fast';
/** the simulator's timings as npm start runs it (packages/sii-simulator: register 2 000 ms, step 1 000 ms) */
const SIM = { registerMs: num('BENCH_SIM_REGISTER_MS', 2000), stepMs: num('BENCH_SIM_STEP_MS', 1000) };
const PARTITIONS = num('BENCH_PARTITIONS', 2);
/** inline (default): the relay and projector in the api's process, as npm start and the Helm chart run them */
const API_PIPELINE = process.env.BENCH_API_PIPELINE === 'separate' ? 'separate' : 'inline';
/** BENCH_REPLICAS=signer=2,sii-uploader=2: processes per service (api stays one: it runs the migrations) */
const REPLICAS = new Map<ServiceName, number>(
  (process.env.BENCH_REPLICAS ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const [name, n] = kv.split('=');
      if (!(SERVICES as readonly string[]).includes(name!) || name === 'api' || !(Number(n) >= 1))
        throw new Error(`BENCH_REPLICAS: ${kv} (service=count, not api)`);
      return [name as ServiceName, Number(n)];
    }),
);
const WEBHOOKS_MODE = process.env.BENCH_WEBHOOKS ?? 'unsubscribed';
if (!['0', '1', 'unsubscribed'].includes(WEBHOOKS_MODE))
  throw new Error(`BENCH_WEBHOOKS: 1, 0 or unsubscribed, not ${WEBHOOKS_MODE}`);
/** the webhooks service runs, with one subscription to BENCH_WEBHOOK_EVENTS and a receiver */
const WEBHOOKS = WEBHOOKS_MODE === '1';
/** the webhooks service runs without any subscription */
const WEBHOOKS_UNSUBSCRIBED = WEBHOOKS_MODE === 'unsubscribed';
const WEBHOOK_EVENT_TYPES = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'];
const WEBHOOK_EVENTS = (process.env.BENCH_WEBHOOK_EVENTS ?? WEBHOOK_EVENT_TYPES.join(','))
  .split(',')
  .filter(Boolean);
for (const e of WEBHOOK_EVENTS)
  if (!WEBHOOK_EVENT_TYPES.includes(e)) throw new Error(`BENCH_WEBHOOK_EVENTS: unknown event ${e}`);
// the wait for the delivery tail looks for each document's terminal delivery
if (WEBHOOKS && !WEBHOOK_EVENTS.some((e) => e !== 'dte.emitted'))
  throw new Error('BENCH_WEBHOOK_EVENTS: needs dte.accepted, dte.rejected or dte.status_changed');
/**
 * warm-up documents per round (BENCH_WARMUP, 1000): posted BENCH_CONCURRENCY at a time and taken
 * to EPR before the measured run, so V8 has optimized every process's hot paths and the figures
 * are those of a service that has been running for a while (the issue's "sustained"); with 20 the
 * same code costs ~20-30 % more, the JIT still compiling
 */
const WARMUP = num('BENCH_WARMUP', 1000);
/**
 * seconds of the warm pipeline with no document, measured just before the window (BENCH_IDLE_S,
 * 10; 0 skips it): each process's CPU per second then is subtracted from its window's CPU in the
 * "net of idle" column, the work the documents caused. At low rates (a loaded machine, a slow
 * SII that makes the window longer) the idle loops otherwise dominate the CPU per document.
 */
const IDLE_S = num('BENCH_IDLE_S', 10);
/** warm-up rounds at most, until the webhooks service (which joins its group at the latest offset) delivers */
const WARMUP_ROUNDS = 3;
const WEBHOOK_TAIL_MS = 120_000;
/**
 * how long documents may take to their verdict beyond the SII's own time: the simulator's
 * register + every intermediate step (at most 8) and, for the first envelopes, the poller's
 * learning of that time (polls at the envelope's age × 1.5: up to half of it again)
 */
const VERDICT_WAIT_MS = 120_000 + 2 * (SIM.registerMs + 8 * SIM.stepMs);
const WEBHOOKS_TRUST = process.env.BENCH_WEBHOOKS_TRUST === 'test-ca' ? 'test-ca' : 'extra-ca';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

async function main(): Promise<void> {
  const workerEnv = {
    ...(BATCH ? { UPLOAD_MAX_DOCS: BATCH } : {}),
    ...(BATCH_WAIT_MS ? { UPLOAD_MAX_WAIT_MS: BATCH_WAIT_MS } : {}),
    ...(FAST_POLL
      ? {
          UPLOAD_SWEEP_MS: '200',
          POLL_FIRST_DELAY_MS: '300',
          POLL_BACKOFF_BASE_MS: '250',
          POLL_BACKOFF_FACTOR: '1.5',
          POLL_BACKOFF_MAX_MS: '1000',
          POLL_TICK_MS: '100',
          POLL_MAX_ATTEMPTS: '200',
        }
      : {}),
    ...(API_PIPELINE === 'separate' ? { API_PIPELINE: 'off' } : {}),
    // test-only: a loopback https receiver may be registered (api) and called (webhooks)
    ...(WEBHOOKS ? { NODE_ENV: 'test', WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true' } : {}),
    ...Object.fromEntries(
      Object.entries(process.env)
        .filter(([k]) => k.startsWith('BENCH_ENV_'))
        .map(([k, v]) => [k.slice(10), v!]),
    ),
  };
  const stack = await testStack();
  const pki = WEBHOOKS ? makeTestPki(['127.0.0.1']) : undefined;
  const rx = pki ? await new Receiver(pki).start() : undefined;
  const webhooksEnv: Record<string, string> | undefined = pki
    ? WEBHOOKS_TRUST === 'test-ca'
      ? { WEBHOOKS_TEST_CA_FILE: pki.caFile }
      : { NODE_EXTRA_CA_CERTS: pki.caFile }
    : undefined;
  console.log('[bench] starting the stack processes …');
  const p = await startPipelineProcesses({
    label: 'bench',
    sim: SIM,
    partitions: PARTITIONS,
    env: workerEnv,
    // npm start runs the RCV synchronizer too: it reads every dte-status record (BENCH_RCV_SYNC=0 leaves it out)
    withRcvSync: process.env.BENCH_RCV_SYNC !== '0',
    ...(webhooksEnv ? { withWebhooks: { env: webhooksEnv } } : {}),
    ...(WEBHOOKS_UNSUBSCRIBED ? { withWebhooks: { env: {} } } : {}),
  }).catch(async (err) => {
    await rx?.close();
    throw err;
  });
  // extra replicas of a worker: same variables, same consumer group, their own log
  const replicaProcs = new Map<ServiceName, ServiceProcess[]>();
  for (const [name, n] of REPLICAS) {
    const more = Array.from(
      { length: n - 1 },
      (_, i) =>
        new ServiceProcess(
          name,
          ['--import', 'tsx', `services/${name}/src/main.ts`],
          p.env,
          path.join(p.logDir, `${name}-${i + 2}.log`),
          new RegExp(`"msg":"${name} ready"`),
        ),
    );
    replicaProcs.set(name, more);
  }
  // the api's relay and projector apart from its HTTP process (BENCH_API_PIPELINE=separate)
  const apiPipeline =
    API_PIPELINE === 'separate'
      ? new ServiceProcess(
          'api-pipeline',
          ['--import', 'tsx', 'services/api/src/pipeline-main.ts'],
          { ...p.env, API_PIPELINE: 'on' },
          path.join(p.logDir, 'api-pipeline.log'),
          /api pipeline running/,
        )
      : undefined;
  try {
    await Promise.all(
      [...[...replicaProcs.values()].flat(), ...(apiPipeline ? [apiPipeline] : [])].map((s) => s.start()),
    );
    const co = await p.seedCompany({
      tipos: [...new Set(TYPES)],
      folios: DOCS + WARMUP * WARMUP_ROUNDS + 10,
    });
    const db = p.db.dataSource;
    let subscriptionId: string | undefined;
    if (rx) {
      const res = await fetch(`${p.apiUrl}/webhooks`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${co.key}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': randomUUID(),
        },
        body: JSON.stringify({ url: rx.url('/bench'), events: WEBHOOK_EVENTS }),
      });
      const body = (await res.json()) as { id: string };
      if (res.status !== 201) throw new Error(`POST /webhooks: ${res.status} ${JSON.stringify(body)}`);
      subscriptionId = body.id;
    }
    // what the receiver got, by event id (first arrival; repeats counted)
    const delivered = new Map<
      string,
      { type: string; dteId: string; terminal: boolean; at: number; times: number }
    >();
    const terminalAt = new Map<string, number>();
    const acceptedAt = new Map<string, number>();
    let scanned = 0;
    const scanDeliveries = () => {
      if (!rx) return;
      for (; scanned < rx.received.length; scanned++) {
        const r = rx.received[scanned]!;
        const e = JSON.parse(r.raw.toString()) as {
          id: string;
          type: string;
          data: { dte_id: string; terminal: boolean };
        };
        const seen = delivered.get(e.id);
        if (seen) {
          seen.times += 1;
          continue;
        }
        delivered.set(e.id, {
          type: e.type,
          dteId: e.data.dte_id,
          terminal: e.data.terminal,
          at: r.at,
          times: 1,
        });
        if (e.data.terminal && !terminalAt.has(e.data.dte_id)) terminalAt.set(e.data.dte_id, r.at);
        if (e.type === 'dte.accepted') acceptedAt.set(e.data.dte_id, r.at);
      }
    };
    const pendingDeliveries = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'pending'`,
          [subscriptionId],
        )
      )[0].n as number;
    /** every one of `docs` had its terminal delivery and nothing is pending; false after `ms` */
    const deliveriesIn = async (docs: string[], ms: number) => {
      const until = Date.now() + ms;
      for (;;) {
        scanDeliveries();
        if (docs.every((id) => terminalAt.has(id)) && (await pendingDeliveries()) === 0) return true;
        if (Date.now() > until) return false;
        await sleep(100);
      }
    };
    /**
     * whether the webhooks service consumed and committed every dte-status record produced so far
     * within `ms` (its consumer group's lag is 0): with no subscription it records nothing, so this
     * is what proves it consumes (a group that has not joined yet has committed nothing: lag > 0)
     */
    let lagAdmin: Admin | undefined;
    const webhooksCaughtUp = async (ms: number) => {
      if (!lagAdmin) {
        lagAdmin = new Kafka({
          clientId: 'bench-webhooks-lag',
          brokers: String(p.env.KAFKA_BROKERS).split(','),
          logLevel: logLevel.NOTHING,
        }).admin();
        await lagAdmin.connect();
      }
      const prefix = String(p.env.KAFKA_TOPIC_PREFIX ?? '');
      const until = Date.now() + ms;
      for (;;) {
        const lag = await consumerGroupLag(lagAdmin, `${prefix}${STATUS_GROUP}`, [
          `${prefix}${PIPELINE_TOPICS.status}`,
        ]);
        if ([...lag.values()].every((n) => n === 0) && lag.size > 0) return true;
        if (Date.now() > until) return false;
        await sleep(100);
      }
    };
    // node:http with a keep-alive agent: fetch (undici) cost the bench client 0.3-0.46 ms of CPU
    // per POST against 0.06-0.11 ms, on the cores the measured system runs on
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    const post = (i: number) =>
      new Promise<{ status: number; id: string; body: { id: string } }>((resolve, reject) => {
        const tipo = TYPES[i % TYPES.length]!;
        const json = JSON.stringify(emissionBody(tipo, co.rut, 1000 + i));
        const req = http.request(
          `${p.apiUrl}/dtes`,
          {
            method: 'POST',
            agent,
            headers: {
              Authorization: `Bearer ${co.key}`,
              'Content-Type': 'application/json',
              'Content-Length': Buffer.byteLength(json),
              'Idempotency-Key': randomUUID(),
              'X-Cert-Id': co.certId,
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('error', reject);
            res.on('end', () => {
              try {
                const body = JSON.parse(text) as { id: string };
                resolve({ status: res.statusCode ?? 0, id: body.id, body });
              } catch (err) {
                reject(err as Error);
              }
            });
          },
        );
        req.on('error', reject);
        req.end(json);
      });
    const eprCount = async (ids: string[]) =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM dtes WHERE id = ANY($1::uuid[]) AND sii_status = 'EPR'`,
          [ids],
        )
      )[0].n as number;

    // warm-up: token cache, JIT, connection pools (not measured)
    let warmPosted = 0;
    const warmUp = async () => {
      const warm: Awaited<ReturnType<typeof post>>[] = [];
      for (let i = 0; i < WARMUP; i += CONCURRENCY)
        warm.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(CONCURRENCY, WARMUP - i) }, () => post(warmPosted++)),
          )),
        );
      if (warm.some((w) => w.status !== 202))
        throw new Error(`warm-up POST: ${JSON.stringify(warm[0]!.body)}`);
      const warmIds = warm.map((w) => w.id);
      const wu = Date.now() + VERDICT_WAIT_MS;
      while ((await eprCount(warmIds)) < WARMUP) {
        if (Date.now() > wu)
          throw new Error(`warm-up documents did not reach EPR in ${VERDICT_WAIT_MS / 1000} s`);
        await sleep(200);
      }
      return warmIds;
    };
    let warmIds = await warmUp();
    let warmRounds = 1;
    // The webhooks service logs "ready" before its dte-status consumer joined its group, and a
    // new group starts at the latest offset: records produced before the join are never
    // delivered. Warm-up rounds until one's deliveries all arrived prove it consumes.
    // Without a subscription, its consumer group's lag falling to 0 proves the same.
    for (let round = 1; rx || WEBHOOKS_UNSUBSCRIBED; round++) {
      if (WEBHOOKS_UNSUBSCRIBED) {
        if (await webhooksCaughtUp(30_000)) break;
      } else if (await deliveriesIn(warmIds, 30_000)) break;
      if (round === WARMUP_ROUNDS)
        throw new Error(
          `webhooks: the deliveries of ${WARMUP_ROUNDS} warm-up rounds did not arrive (log ${p.webhooks?.logFile})`,
        );
      warmIds = await warmUp();
      warmRounds += 1;
    }

    // CPU accounting: services, their PostgreSQL backends, PostgreSQL's own processes, Kafka, registry
    let activity: { at: number; rows: Awaited<ReturnType<BackendQuery>> } | undefined;
    const backends: BackendQuery = async () => {
      if (!activity || Date.now() - activity.at > 200)
        activity = {
          at: Date.now(),
          rows: await db.query(
            `SELECT pid, application_name, backend_type FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
          ),
        };
      return activity.rows;
    };
    // the postmaster: the parent of any backend (over TCP or a Unix socket alike)
    const postmaster = parentOf((await db.query('SELECT pg_backend_pid() AS pid'))[0].pid as number);
    const kafkaPid = pidListeningOn(Number(stack.kafkaBrokers[0]!.split(':')[1]));
    const registryPid = pidListeningOn(Number(new URL(stack.schemaRegistryUrl).port));
    // the api's rate limits count in Redis (two commands per POST)
    const redisPid = pidListeningOn(Number(new URL(stack.redisUrl).port || 6379));
    const cpu = new CpuAccount();
    const procs = (n: ServiceName) => [p.services[n], ...(replicaProcs.get(n) ?? [])];
    const pids = (n: ServiceName) => procs(n).flatMap((s) => (s.child?.pid ? [s.child.pid] : []));
    const apiPipelinePids = () => (apiPipeline?.child?.pid ? [apiPipeline.child.pid] : []);
    for (const n of SERVICES) {
      cpu.add(n === 'api' && apiPipeline ? 'api (HTTP)' : n, async () => pids(n), { children: true });
      if (n === 'api' && apiPipeline)
        cpu.add('api pipeline (relay, projector)', async () => apiPipelinePids());
    }
    const webhooksPids = () => (p.webhooks?.child?.pid ? [p.webhooks.child.pid] : []);
    if (p.webhooks) cpu.add('webhooks', webhooksPids);
    const rcvSyncPids = () => (p.rcvSync?.child?.pid ? [p.rcvSync.child.pid] : []);
    if (p.rcvSync) cpu.add('rcv-sync', rcvSyncPids);
    for (const n of SERVICES) {
      cpu.add(`postgres for ${n === 'api' && apiPipeline ? 'api (HTTP)' : n}`, async () =>
        (await Promise.all(pids(n).map((pid) => backendsOf(pid, backends)))).flat(),
      );
      if (n === 'api' && apiPipeline)
        cpu.add('postgres for api pipeline', async () =>
          (await Promise.all(apiPipelinePids().map((pid) => backendsOf(pid, backends)))).flat(),
        );
    }
    if (p.webhooks)
      cpu.add('postgres for webhooks', async () =>
        (await Promise.all(webhooksPids().map((pid) => backendsOf(pid, backends)))).flat(),
      );
    if (p.rcvSync)
      cpu.add('postgres for rcv-sync', async () =>
        (await Promise.all(rcvSyncPids().map((pid) => backendsOf(pid, backends)))).flat(),
      );
    // with its schema validation: the ended xmllint runs (one per envelope) and its live children
    // (the resident validator process of @dte/engine's schema.ts)
    cpu.add(
      'sii-simulator',
      () => (p.simulator.child?.pid ? [p.simulator.child.pid, ...childrenOf(p.simulator.child.pid)] : []),
      { children: true },
    );
    cpu.add('postgres own processes (shared)', () => postgresAuxiliary(postmaster, backends));
    cpu.add('kafka broker (shared)', () => (kafkaPid ? [kafkaPid] : []));
    cpu.add('schema registry (shared)', () => (registryPid ? [registryPid] : []));
    cpu.add('redis (shared)', () => (redisPid ? [redisPid] : []));
    cpu.add('bench client', () => [process.pid]);
    if (NICE !== 0) {
      // the batch side yields the CPU to the api (HTTP) and its backends, as its own pods would
      const batch = [
        ...SERVICES.filter((n) => n !== 'api').flatMap(pids),
        ...apiPipelinePids(),
        ...webhooksPids(),
        ...(p.simulator.child?.pid ? [p.simulator.child.pid] : []),
      ];
      const batchBackends = (await Promise.all(batch.map((pid) => backendsOf(pid, backends)))).flat();
      for (const pid of [...batch, ...batchBackends]) {
        try {
          os.setPriority(pid, NICE);
        } catch (err) {
          throw new Error(
            `BENCH_NICE: cannot renice pid ${pid} (${(err as Error).message}); PostgreSQL's backends belong to its own user: run as root or leave BENCH_NICE unset`,
          );
        }
      }
    }
    // the idle rate of each process (nothing in flight) before the window opens
    const idleRate = new Map<string, number>();
    if (IDLE_S > 0) {
      await cpu.start();
      await sleep(IDLE_S * 1000);
      await cpu.sample();
      for (const t of cpu.totals()) idleRate.set(t.name, t.seconds / IDLE_S);
    }
    // before the window opens: its own CPU is not the bench client's
    const yardstick0 = rsaSignatureMs();
    await cpu.start();
    const load0 = os.loadavg()[0]!;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sleep(500);
        await cpu.sample().catch(() => undefined);
      }
    })();

    const latencies: number[] = [];
    const ids: string[] = [];
    /** epoch ms each accepted document's POST was sent (open loop: its scheduled instant) */
    const sentAt = new Map<string, number>();
    const refused = new Map<string, number>();
    const record = (r: Awaited<ReturnType<typeof post>>, ms: number, sent: number) => {
      if (r.status === 202) {
        latencies.push(ms);
        ids.push(r.id);
        sentAt.set(r.id, performance.timeOrigin + sent);
      } else {
        const k = `${r.status} ${(r.body as unknown as { code?: string }).code ?? ''}`;
        refused.set(k, (refused.get(k) ?? 0) + 1);
      }
    };
    const t0 = Date.now();
    if (MODE === 'closed') {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < DOCS) {
            const t = performance.now();
            const r = await post(warmPosted + next++);
            record(r, performance.now() - t, t);
          }
        }),
      );
    } else {
      const start = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < DOCS; i++) {
        const due = start + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        pending.push(
          post(warmPosted + i).then(
            (r) => record(r, performance.now() - due, due),
            () => record({ status: 0, id: '', body: { id: '' } }, 0, due),
          ),
        );
      }
      await Promise.all(pending);
    }
    const postedAt = Date.now();
    const deadline = postedAt + 180_000 + VERDICT_WAIT_MS;
    let done = 0;
    while ((done = await eprCount(ids)) < ids.length) {
      if (Date.now() > deadline)
        throw new Error(
          `only ${done}/${ids.length} documents reached EPR in ${(180_000 + VERDICT_WAIT_MS) / 1000} s`,
        );
      await sleep(100);
    }
    const eprAt = Date.now();
    // the delivery tail: the CPU window stays open until the webhooks of these documents are in
    const tailComplete = rx
      ? await deliveriesIn(ids, WEBHOOK_TAIL_MS)
      : WEBHOOKS_UNSUBSCRIBED
        ? await webhooksCaughtUp(WEBHOOK_TAIL_MS)
        : true;
    await lagAdmin?.disconnect();
    const endAt = Date.now();
    sampling = false;
    await sampler;
    await cpu.sample();
    const totals = cpu.totals();
    const load1 = os.loadavg()[0]!;
    const yardstick1 = rsaSignatureMs();
    const e2e: { id: string; ms: number; epr_at: number }[] = await db.query(
      `SELECT d.id, extract(epoch FROM (e.observed_at - d.created_at)) * 1000 AS ms,
              extract(epoch FROM e.observed_at) * 1000 AS epr_at
         FROM dtes d JOIN dte_events e ON e.dte_id = d.id AND e.sii_status = 'EPR'
        WHERE d.id = ANY($1::uuid[])`,
      [ids],
    );
    // where each document's time went: waiting for its envelope, the upload, the SII and the polls
    const stages: { to_upload: number; upload: number; to_verdict: number; polls: number }[] = await db.query(
      `SELECT extract(epoch FROM (u.created_at - d.created_at)) * 1000 AS to_upload,
                extract(epoch FROM (u.uploaded_at - u.created_at)) * 1000 AS upload,
                extract(epoch FROM (e.observed_at - u.uploaded_at)) * 1000 AS to_verdict,
                p.attempts + 1 AS polls
           FROM dtes d
           JOIN dte_events e ON e.dte_id = d.id AND e.sii_status = 'EPR'
           JOIN sii_uploads u ON d.id = ANY(u.dte_ids) AND u.uploaded_at IS NOT NULL
           LEFT JOIN sii_polls p ON p.upload_id = u.id
          WHERE d.id = ANY($1::uuid[])`,
      [ids],
    );
    const uploads: { n: number; docs: number }[] = await db.query(
      `SELECT count(*)::int AS n, coalesce(sum(cardinality(dte_ids)), 0)::int AS docs FROM sii_uploads
        WHERE dte_ids && $1::uuid[]`,
      [ids],
    );
    latencies.sort((a, b) => a - b);
    const e2eMs = e2e.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const secs = (eprAt - t0) / 1000;
    const n = ids.length;

    console.log('\n[bench] configuration');
    console.log(
      MODE === 'closed'
        ? `  mode closed loop: ${CONCURRENCY} concurrent clients, each POSTs when its last POST answered`
        : `  mode OPEN loop: ${RATE} POST/s offered on a fixed schedule (latency from the scheduled instant)`,
    );
    console.log(
      `  documents ${DOCS} (types ${TYPES.join(',')}), ${WARMUP * warmRounds} warm-up documents not measured (${warmRounds} round${warmRounds > 1 ? 's' : ''})`,
    );
    const uploadEnv = Object.entries(workerEnv).filter(([k]) => k.startsWith('UPLOAD_'));
    console.log(
      `  uploader: ${uploadEnv.length ? uploadEnv.map(([k, v]) => `${k} ${v}`).join(', ') + ', otherwise ' : ''}the service's defaults (as npm start)`,
    );
    console.log(
      FAST_POLL
        ? '  poller: first 300 ms, backoff 250 ms x1.5 up to 1000 ms, tick 100 ms (BENCH_POLL=fast)'
        : "  poller: the service's defaults (as npm start: adaptive pace, POLL_PACE)",
    );
    console.log(`  simulator: registerMs ${SIM.registerMs}, stepMs ${SIM.stepMs} (process of its own)`);
    const replicas = SERVICES.map((n) => `${n} ×${REPLICAS.get(n) ?? 1}`).join(', ');
    console.log(
      `  topic partitions ${PARTITIONS}; processes: ${replicas}` +
        (apiPipeline
          ? ', api-pipeline ×1 (the relay and projector apart: BENCH_API_PIPELINE=separate)'
          : ' (api with relay and projector: BENCH_API_PIPELINE=inline)'),
    );
    const extra = Object.entries(workerEnv).filter(
      ([k]) => !k.startsWith('UPLOAD_') && !k.startsWith('POLL_'),
    );
    if (extra.length) console.log(`  service env: ${extra.map(([k, v]) => `${k}=${v}`).join(' ')}`);
    if (NICE !== 0)
      console.log(
        `  priority: every process but the api (HTTP), and their PostgreSQL backends, at nice ${NICE} (BENCH_NICE)`,
      );
    console.log(
      rx
        ? `  webhooks: services/webhooks ×1 (defaults: WEBHOOKS_CONCURRENCY 64, 4 per endpoint; + WEBHOOKS_HEALTH_PORT=0 ${WEBHOOKS_TRUST === 'test-ca' ? 'WEBHOOKS_TEST_CA_FILE' : 'NODE_EXTRA_CA_CERTS'}=<test CA>: BENCH_WEBHOOKS_TRUST=${WEBHOOKS_TRUST}); one subscription by POST /webhooks for ${WEBHOOK_EVENTS.join(', ')} to an https receiver on loopback in the bench client (answers 200 at once); the CPU window runs to the last delivery`
        : WEBHOOKS_UNSUBSCRIBED
          ? '  webhooks: services/webhooks ×1 with no subscription (BENCH_WEBHOOKS=unsubscribed): it reads every dte-status record (and records nothing for an organization with no subscription); the CPU window runs until its consumer group has no lag'
          : '  webhooks: off (BENCH_WEBHOOKS=0)',
    );
    console.log(
      p.rcvSync
        ? '  rcv-sync: services/rcv-sync ×1, as npm start runs it (it reads every dte-status record; BENCH_RCV_SYNC=0 leaves it out)'
        : '  rcv-sync: off (BENCH_RCV_SYNC=0)',
    );
    console.log(
      `  machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}; load average (1 min) ${load0.toFixed(1)} at start, ${load1.toFixed(1)} at end`,
    );
    console.log(
      `  machine speed (scripts/bench/machine-yardstick.ts): ${yardstick0.toFixed(3)} ms of CPU per RSA-2048 signature before the run, ${yardstick1.toFixed(3)} ms after it (runs compare at equal speed)`,
    );
    console.log('[bench] figures');
    console.log(
      `  POST /dtes latency: p50 ${fmt(percentile(latencies, 50))}, p95 ${fmt(percentile(latencies, 95))}, p99 ${fmt(percentile(latencies, 99))}, max ${fmt(latencies[latencies.length - 1]!)}`,
    );
    console.log(
      `  POST /dtes accepted: ${(n / ((postedAt - t0) / 1000)).toFixed(1)} docs/s (${n} in ${((postedAt - t0) / 1000).toFixed(1)} s)` +
        (refused.size ? `; refused: ${[...refused].map(([k, v]) => `${v} × ${k}`).join(', ')}` : ''),
    );
    console.log(
      `  POST → EPR: ${(n / secs).toFixed(1)} docs/s (first POST to last EPR: ${secs.toFixed(1)} s)`,
    );
    console.log(
      `  per document POST → EPR (created_at → EPR observed_at): p50 ${fmt(percentile(e2eMs, 50))}, p99 ${fmt(percentile(e2eMs, 99))}`,
    );
    // the pipeline's capacity apart from the SII's fixed latency: verdicts per second once they flow
    const eprTimes = e2e.map((r) => Number(r.epr_at)).sort((a, b) => a - b);
    const eprSpan = (eprTimes[eprTimes.length - 1]! - eprTimes[0]!) / 1000;
    const at = (q: number) => eprTimes[Math.min(eprTimes.length - 1, Math.floor(q * eprTimes.length))]!;
    const steadySpan = (at(0.9) - at(0.1)) / 1000;
    console.log(
      `  sustained verdicts (EPR per second, the SII's fixed latency left out): ${eprSpan > 0 ? ((n - 1) / eprSpan).toFixed(1) : '∞'} docs/s first EPR → last EPR (${eprSpan.toFixed(1)} s); ` +
        `${steadySpan > 0 ? ((0.8 * n) / steadySpan).toFixed(1) : '∞'} docs/s over the steady window (10th → 90th percentile EPR, ${steadySpan.toFixed(1)} s)`,
    );
    const col = (k: keyof (typeof stages)[number]) => stages.map((r) => Number(r[k])).sort((a, b) => a - b);
    const stage = (k: keyof (typeof stages)[number]) =>
      `p50 ${fmt(percentile(col(k), 50))} p99 ${fmt(percentile(col(k), 99))}`;
    const verdictAt = SIM.registerMs + (SIM.stepMs > 0 ? DEFAULT_INTERMEDIATES.length * SIM.stepMs : 0);
    console.log(
      `  per document stages: created → in an envelope ${stage('to_upload')}; upload ${stage('upload')}; ` +
        `uploaded → EPR observed ${stage('to_verdict')} (the simulator answers EPR ${verdictAt} ms after receipt: ` +
        `register ${SIM.registerMs} + ${DEFAULT_INTERMEDIATES.length} states × ${SIM.stepMs}); ` +
        `polls per document's envelope p50 ${percentile(col('polls'), 50)} max ${col('polls').at(-1)}`,
    );
    console.log(`  envelopes: ${uploads[0]!.n} for ${uploads[0]!.docs} documents`);
    if (WEBHOOKS_UNSUBSCRIBED)
      console.log(
        `  webhooks service (no subscription): consumed every dte-status record ${((endAt - eprAt) / 1000).toFixed(1)} s after the last one was observed` +
          (tailComplete ? '' : `; INCOMPLETE after ${WEBHOOK_TAIL_MS / 1000} s`),
      );
    if (rx) {
      scanDeliveries();
      const measured = new Set(ids);
      const ours = [...delivered.values()].filter((d) => measured.has(d.dteId));
      const requests = ours.reduce((a, d) => a + d.times, 0);
      const byType = new Map<string, number>();
      for (const d of ours) byType.set(d.type, (byType.get(d.type) ?? 0) + 1);
      const eprAtOf = new Map(e2e.map((r) => [r.id, Number(r.epr_at)]));
      const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
      const postToAccepted = sorted(
        ids.flatMap((id) => (acceptedAt.has(id) ? [acceptedAt.get(id)! - sentAt.get(id)!] : [])),
      );
      const eprToAccepted = sorted(
        ids.flatMap((id) =>
          acceptedAt.has(id) && eprAtOf.has(id) ? [acceptedAt.get(id)! - eprAtOf.get(id)!] : [],
        ),
      );
      const missing = ids.filter((id) => !terminalAt.has(id)).length;
      console.log(
        `  webhook deliveries received: ${ours.length} events (${requests} requests: ${requests - ours.length} repeats) for ${n} documents, ${(ours.length / n).toFixed(2)} per document (${[...byType].map(([k, v]) => `${k} ${v}`).join(', ')})` +
          (tailComplete
            ? ''
            : `; INCOMPLETE after ${WEBHOOK_TAIL_MS / 1000} s: ${missing} documents without their terminal delivery, ${await pendingDeliveries()} deliveries pending`),
      );
      if (postToAccepted.length)
        console.log(
          `  POST → dte.accepted delivered: p50 ${fmt(percentile(postToAccepted, 50))}, p99 ${fmt(percentile(postToAccepted, 99))} (${postToAccepted.length} documents); EPR observed → dte.accepted delivered: p50 ${fmt(percentile(eprToAccepted, 50))}, p99 ${fmt(percentile(eprToAccepted, 99))}`,
        );
      const lastDelivery = ours.length ? ours.reduce((m, d) => Math.max(m, d.at), 0) : NaN;
      const cpuOf = (name: string) => totals.find((t) => t.name === name)?.seconds ?? 0;
      // every delivery the window saw (a warm-up straggler included): the cost of one delivery
      const inWindow = [...delivered.values()].filter((d) => d.at >= t0).length || NaN;
      console.log(
        `  delivery tail: last delivery ${((lastDelivery - eprAt) / 1000).toFixed(1)} s after the last EPR (window closed ${((endAt - eprAt) / 1000).toFixed(1)} s after it); CPU per delivery (${inWindow} in the window): webhooks ${((cpuOf('webhooks') * 1000) / inWindow).toFixed(2)} ms, postgres for webhooks ${((cpuOf('postgres for webhooks') * 1000) / inWindow).toFixed(2)} ms`,
      );
    }
    const window = (endAt - t0) / 1000;
    console.log(
      `  CPU per document (ms), over the measured run (${window.toFixed(1)} s: first POST → last EPR${rx ? ' → last webhook delivery' : WEBHOOKS_UNSUBSCRIBED ? ' → consumed by the webhooks service' : ''}):`,
    );
    let system = 0;
    let simulator = 0;
    let systemNet = 0;
    let simulatorNet = 0;
    const net = (t: { name: string; seconds: number }) =>
      ((t.seconds - (idleRate.get(t.name) ?? 0) * window) * 1000) / n;
    if (IDLE_S > 0)
      console.log(
        `    ${''.padEnd(34)} ${'ms/doc'.padStart(7)}   ${'(CPU s)'.padEnd(9)} ${'net of idle'.padStart(11)}  (idle ms/s over ${IDLE_S} s before the window)`,
      );
    for (const t of totals) {
      const perDoc = (t.seconds * 1000) / n;
      if (t.name !== 'bench client') {
        system += perDoc;
        systemNet += net(t);
      }
      if (t.name === 'sii-simulator') {
        simulator += perDoc;
        simulatorNet += net(t);
      }
      console.log(
        `    ${t.name.padEnd(34)} ${perDoc.toFixed(2).padStart(7)}   ${`(${t.seconds.toFixed(1)} s)`.padEnd(9)}` +
          (IDLE_S > 0
            ? ` ${net(t).toFixed(2).padStart(11)}  (${((idleRate.get(t.name) ?? 0) * 1000).toFixed(1)})`
            : ''),
      );
    }
    const both = (a: number, b: number) =>
      `${a.toFixed(2).padStart(7)}${IDLE_S > 0 ? `   ${''.padEnd(9)} ${b.toFixed(2).padStart(11)}` : ''}`;
    console.log(`    ${'whole system (all but the client)'.padEnd(34)} ${both(system, systemNet)}`);
    // the simulator does the SII's side of the work: a deployment pays everything else
    console.log(
      `    ${'  of which the service (no SII sim)'.padEnd(34)} ${both(system - simulator, systemNet - simulatorNet)}`,
    );
  } finally {
    await Promise.all([...replicaProcs.values()].flat().map((s) => s.stop()));
    await apiPipeline?.stop();
    await p.close();
    await rx?.close();
  }
}

runMain(main);
