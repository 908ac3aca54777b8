/**
 * Benchmark of the emission pipeline (issue 6, item 9): documents per second from POST /dtes to
 * the SII's EPR, and POST /dtes latency, with the api, signer, sii-uploader and sii-poller as real
 * processes and the SII simulator as a process, on the local stack (a schema and topic prefix of
 * its own). Prints figures and the configuration; asserts nothing about time.
 *
 *   npm run bench:pipeline
 *   BENCH_DOCS=500 BENCH_CONCURRENCY=16 BENCH_BATCH=100 npm run bench:pipeline
 *
 * BENCH_DOCS (300), BENCH_CONCURRENCY clients (8), BENCH_TYPES (33), BENCH_BATCH = UPLOAD_MAX_DOCS
 * (50), BENCH_BATCH_WAIT_MS = UPLOAD_MAX_WAIT_MS (500), BENCH_SIM_REGISTER_MS (300) and
 * BENCH_SIM_STEP_MS (50): the simulator's QueryEstUp timings, BENCH_PARTITIONS (2).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { SERVICES, emissionBody, percentile, startPipelineProcesses } from '../test/support/pipeline-harness';

const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const DOCS = num('BENCH_DOCS', 300);
const CONCURRENCY = num('BENCH_CONCURRENCY', 8);
const TYPES = (process.env.BENCH_TYPES ?? '33').split(',').map(Number) as (33 | 34 | 52 | 61)[];
const BATCH = num('BENCH_BATCH', 50);
const BATCH_WAIT_MS = num('BENCH_BATCH_WAIT_MS', 500);
const SIM = { registerMs: num('BENCH_SIM_REGISTER_MS', 300), stepMs: num('BENCH_SIM_STEP_MS', 50) };
const PARTITIONS = num('BENCH_PARTITIONS', 2);
const WARMUP = 5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

async function main(): Promise<void> {
  const workerEnv = {
    UPLOAD_MAX_DOCS: String(BATCH),
    UPLOAD_MAX_WAIT_MS: String(BATCH_WAIT_MS),
    UPLOAD_SWEEP_MS: '200',
    POLL_FIRST_DELAY_MS: '300',
    POLL_BACKOFF_BASE_MS: '250',
    POLL_BACKOFF_FACTOR: '1.5',
    POLL_BACKOFF_MAX_MS: '1000',
    POLL_TICK_MS: '100',
    POLL_MAX_ATTEMPTS: '200',
  };
  console.log('[bench] starting the stack processes …');
  const p = await startPipelineProcesses({
    label: 'bench',
    sim: SIM,
    partitions: PARTITIONS,
    env: workerEnv,
  });
  try {
    const co = await p.seedCompany({ tipos: [...new Set(TYPES)], folios: DOCS + WARMUP + 10 });
    const db = p.db.dataSource;
    const post = async (i: number) => {
      const tipo = TYPES[i % TYPES.length]!;
      const t = performance.now();
      const res = await fetch(`${p.apiUrl}/dtes`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${co.key}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': randomUUID(),
          'X-Cert-Id': co.certId,
        },
        body: JSON.stringify(emissionBody(tipo, co.rut, 1000 + i)),
      });
      const body = (await res.json()) as { id: string };
      const ms = performance.now() - t;
      if (res.status !== 202) throw new Error(`POST /dtes: ${res.status} ${JSON.stringify(body)}`);
      return { id: body.id, ms };
    };
    const eprCount = async (ids: string[]) =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM dtes WHERE id = ANY($1::uuid[]) AND sii_status = 'EPR'`,
          [ids],
        )
      )[0].n as number;

    // warm-up: token cache, JIT, connection pools (not measured)
    const warm = await Promise.all(Array.from({ length: WARMUP }, (_, i) => post(i)));
    const warmIds = warm.map((w) => w.id);
    const wu = Date.now() + 120_000;
    while ((await eprCount(warmIds)) < WARMUP) {
      if (Date.now() > wu) throw new Error('warm-up documents did not reach EPR in 120 s');
      await sleep(200);
    }

    const procs = [...SERVICES.map((n) => p.services[n]), p.simulator];
    const cpu0 = procs.map((s) => s.cpuSeconds() ?? 0);
    const latencies: number[] = [];
    const ids: string[] = [];
    let next = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < DOCS) {
          const r = await post(WARMUP + next++);
          latencies.push(r.ms);
          ids.push(r.id);
        }
      }),
    );
    const postedAt = Date.now();
    const deadline = postedAt + 300_000;
    let done = 0;
    while ((done = await eprCount(ids)) < DOCS) {
      if (Date.now() > deadline) throw new Error(`only ${done}/${DOCS} documents reached EPR in 300 s`);
      await sleep(100);
    }
    const eprAt = Date.now();
    const cpu = procs.map((s, i) => `${s.name} ${((s.cpuSeconds() ?? 0) - cpu0[i]!).toFixed(1)}`).join(', ');
    const e2e: { ms: number }[] = await db.query(
      `SELECT extract(epoch FROM (e.observed_at - d.created_at)) * 1000 AS ms
         FROM dtes d JOIN dte_events e ON e.dte_id = d.id AND e.sii_status = 'EPR'
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

    console.log('\n[bench] configuration');
    console.log(
      `  documents ${DOCS} (types ${TYPES.join(',')}), ${CONCURRENCY} concurrent clients, ${WARMUP} warm-up`,
    );
    console.log(
      `  uploader: UPLOAD_MAX_DOCS ${BATCH}, UPLOAD_MAX_WAIT_MS ${BATCH_WAIT_MS}, UPLOAD_SWEEP_MS 200`,
    );
    console.log('  poller: first 300 ms, backoff 250 ms x1.5 up to 1000 ms, tick 100 ms');
    console.log(`  simulator: registerMs ${SIM.registerMs}, stepMs ${SIM.stepMs} (process of its own)`);
    console.log(`  topic partitions ${PARTITIONS}; one process per service (api with relay and projector)`);
    console.log(
      `  machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('[bench] figures');
    console.log(
      `  POST /dtes latency: p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}, max ${fmt(latencies[latencies.length - 1]!)}`,
    );
    console.log(
      `  POST /dtes accepted: ${(DOCS / ((postedAt - t0) / 1000)).toFixed(1)} docs/s (${DOCS} in ${((postedAt - t0) / 1000).toFixed(1)} s)`,
    );
    console.log(
      `  POST → EPR: ${(DOCS / secs).toFixed(1)} docs/s (first POST to last EPR: ${secs.toFixed(1)} s)`,
    );
    console.log(
      `  per document POST → EPR (created_at → EPR observed_at): p50 ${fmt(percentile(e2eMs, 50))}, p99 ${fmt(percentile(e2eMs, 99))}`,
    );
    console.log(`  CPU seconds used during the measured run: ${cpu}`);
    console.log(`  envelopes: ${uploads[0]!.n} for ${uploads[0]!.docs} documents`);
  } finally {
    await p.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
