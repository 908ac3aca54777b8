/**
 * Benchmark of boletas through POST /boletas/batch (issue 16): boletas per second accepted by the
 * batch endpoint, and per second to the SII's verdict (EPR through the boleta REST channel), with
 * the api, signer, sii-uploader and sii-poller as real processes and the SII simulator as a
 * process, on the local stack (a schema and topic prefix of its own). Prints figures and the
 * configuration; asserts nothing about time. Bounded: gives up after BENCH_DEADLINE_S (below),
 * for the warm-up and again for the measured batches.
 *
 *   npm run bench:boletas                                     # 10 000 boletas, SII 2 000/1 000
 *   BENCH_SIM_REGISTER_MS=30000 BENCH_SIM_STEP_MS=10000 npm run bench:boletas   # the slow SII
 *
 * By default it measures what `npm start` deploys (issue 27): the uploader's and the poller's own
 * defaults (UPLOAD_MAX_DOCS, UPLOAD_MAX_WAIT_MS, the adaptive poll pace) and the simulator at npm
 * start's timings (register 2 000 ms, step 1 000 ms; 0/0 answers at once; 30000/10000 is the slow
 * SII). BENCH_WARMUP (1): batches posted and waited to their verdicts before the measured ones
 * (JIT, pools, and the poller's pace learns the SII's time, as in a running deployment; 0 measures
 * a cold pipeline, whose first envelopes search the SII's time). BENCH_BATCHES (10), BENCH_BATCH_SIZE (1000, the spec's maximum), BENCH_UPLOAD_MAX_DOCS and
 * BENCH_UPLOAD_MAX_WAIT_MS (the uploader's defaults unless given), BENCH_POLL=fast (the quick poll
 * schedule of issue 16: first 300 ms, 250 ms ×1.5 up to 1 s, tick 100 ms), BENCH_SIM_REGISTER_MS
 * (2000), BENCH_SIM_STEP_MS (1000), BENCH_PARTITIONS (2), BENCH_DEADLINE_S (180 s plus three times
 * the simulator's time to a verdict).
 *
 * Printed: boletas per second accepted, end to end (first POST to last EPR: it holds the SII's
 * fixed latency once), the sustained verdict rate (EPR per second between the first and the last
 * EPR, and over the steady window from the 10th to the 90th percentile EPR: the pipeline's
 * capacity apart from the SII's latency), per boleta POST → EPR, and the services' CPU per boleta.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { santiagoDate } from '@dte/engine';
import { DEFAULT_INTERMEDIATES } from '@dte/sii-simulator';
import { SERVICES, percentile, startPipelineProcesses } from '../test/support/pipeline-harness';
import { runMain } from './bench/run-main';

const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const BATCHES = num('BENCH_BATCHES', 10);
const SIZE = num('BENCH_BATCH_SIZE', 1000);
const MAX_DOCS = process.env.BENCH_UPLOAD_MAX_DOCS;
const WAIT_MS = process.env.BENCH_UPLOAD_MAX_WAIT_MS;
const FAST_POLL = process.env.BENCH_POLL === 'fast';
/** the simulator's timings as npm start runs it (register 2 000 ms, step 1 000 ms) */
const SIM = { registerMs: num('BENCH_SIM_REGISTER_MS', 2000), stepMs: num('BENCH_SIM_STEP_MS', 1000) };
/** when the simulator answers a verdict, after receipt */
const VERDICT_MS = SIM.registerMs + (SIM.stepMs > 0 ? DEFAULT_INTERMEDIATES.length * SIM.stepMs : 0);
const PARTITIONS = num('BENCH_PARTITIONS', 2);
/** warm-up batches (BENCH_WARMUP, 1), waited to their verdicts, not measured; 0: the measured ones meet a cold pipeline */
const WARMUP = num('BENCH_WARMUP', 1);
const DEADLINE_S = num('BENCH_DEADLINE_S', 180 + (3 * VERDICT_MS) / 1000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function boleta(i: number, rut: string) {
  const exenta = i % 4 === 3;
  const precio = 990 + (i % 5000);
  return {
    tipo_dte: exenta ? 41 : 39,
    rut_emisor: rut,
    fecha_emision: santiagoDate(new Date()),
    items: [
      { nombre: `Producto ${i}`, cantidad: 1, precio_unitario: precio, exento: exenta, monto_item: precio },
    ],
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  console.log('[bench] starting the stack processes …');
  const p = await startPipelineProcesses({
    label: 'bench-boletas',
    sim: SIM,
    partitions: PARTITIONS,
    env: {
      BOLETAS_ENABLED: 'true',
      ...(MAX_DOCS ? { UPLOAD_MAX_DOCS: MAX_DOCS } : {}),
      ...(WAIT_MS ? { UPLOAD_MAX_WAIT_MS: WAIT_MS } : {}),
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
    },
  });
  try {
    const total = BATCHES * SIZE;
    const co = await p.seedCompany({ tipos: [39, 41], folios: total + WARMUP * SIZE + 10 });
    const db = p.db.dataSource;
    const post = async (b: number): Promise<{ batchId: string; ms: number }> => {
      const t = performance.now();
      const res = await fetch(`${p.apiUrl}/boletas/batch`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${co.key}`,
          'Content-Type': 'application/json',
          'X-Cert-Id': co.certId,
        },
        body: JSON.stringify({
          batch_idempotency_key: randomUUID(),
          boletas: Array.from({ length: SIZE }, (_, i) => boleta(b * SIZE + i, co.rut)),
        }),
      });
      const body = (await res.json()) as { batchId: string; queued: number };
      if (res.status !== 202) throw new Error(`POST /boletas/batch: ${res.status} ${JSON.stringify(body)}`);
      return { batchId: body.batchId, ms: performance.now() - t };
    };
    /** boletas of the batches at EPR and failed, waiting until all are one or the other (or the deadline) */
    const verdicts = async (ids: string[], n: number, deadline: number) => {
      for (;;) {
        const r: { done: number; failed: number }[] = await db.query(
          `SELECT count(*) FILTER (WHERE sii_status = 'EPR')::int AS done,
                  count(*) FILTER (WHERE sii_status IN ('RCH', 'RSC', 'RFR', 'RCT', 'emision_fallida', 'stuck'))::int AS failed
             FROM dtes WHERE batch_id = ANY($1::uuid[])`,
          [ids],
        );
        if (r[0]!.done + r[0]!.failed >= n || Date.now() > deadline) return r[0]!;
        await sleep(200);
      }
    };
    // warm-up (not measured): JIT, pools, and the poller's pace learns the SII's verdict time, as
    // in a deployment that has been running (bench:pipeline does the same)
    let b = 0;
    const warmIds: string[] = [];
    for (let w = 0; w < WARMUP; w++) warmIds.push((await post(b++)).batchId);
    if (WARMUP) {
      const w = await verdicts(warmIds, WARMUP * SIZE, started + DEADLINE_S * 1000);
      if (w.done + w.failed < WARMUP * SIZE) throw new Error(`warm-up: ${w.done} EPR of ${WARMUP * SIZE}`);
    }
    const procs = [...SERVICES.map((n) => p.services[n]), p.simulator];
    const cpu0 = procs.map((s) => s.cpuSeconds() ?? 0);
    const postMs: number[] = [];
    const batchIds: string[] = [];
    const load0 = os.loadavg()[0]!;
    const t0 = Date.now();
    for (let i = 0; i < BATCHES; i++) {
      const r = await post(b++);
      postMs.push(r.ms);
      batchIds.push(r.batchId);
    }
    const acceptedAt = Date.now();
    const { done, failed } = await verdicts(batchIds, total, t0 + DEADLINE_S * 1000);
    const endAt = Date.now();
    const cpuS = procs.map((s, i) => (s.cpuSeconds() ?? 0) - cpu0[i]!);
    const cpu = procs.map((s, i) => `${s.name} ${cpuS[i]!.toFixed(1)}`).join(', ');
    const uploads: { n: number; max: number }[] = await db.query(
      `SELECT count(*)::int AS n, coalesce(max(cardinality(dte_ids)), 0)::int AS max FROM sii_uploads WHERE channel = 'boleta'`,
    );
    const epr: { ms: number; at: number }[] = await db.query(
      `SELECT extract(epoch FROM (e.observed_at - d.created_at)) * 1000 AS ms,
              extract(epoch FROM e.observed_at) * 1000 AS at
         FROM dtes d JOIN dte_events e ON e.dte_id = d.id AND e.sii_status = 'EPR'
        WHERE d.batch_id = ANY($1::uuid[])`,
      [batchIds],
    );
    const e2eMs = epr.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const eprAt = epr.map((r) => Number(r.at)).sort((a, b) => a - b);
    console.log('\n[bench] configuration');
    console.log(
      `  ${BATCHES} batch(es) of ${SIZE} boletas (3 of 4 type 39, 1 of 4 type 41), posted one after another, after ${WARMUP} warm-up batch(es) waited to their verdicts (BENCH_WARMUP)`,
    );
    console.log(
      `  uploader: ${MAX_DOCS ? `UPLOAD_MAX_DOCS ${MAX_DOCS}, ` : ''}${WAIT_MS ? `UPLOAD_MAX_WAIT_MS ${WAIT_MS}, ` : ''}${MAX_DOCS || WAIT_MS ? 'otherwise ' : ''}the service's defaults (as npm start)`,
    );
    console.log(
      FAST_POLL
        ? '  poller: first 300 ms, backoff 250 ms x1.5 up to 1000 ms, tick 100 ms (BENCH_POLL=fast)'
        : "  poller: the service's defaults (as npm start: adaptive pace, POLL_PACE)",
    );
    console.log(
      `  simulator: registerMs ${SIM.registerMs}, stepMs ${SIM.stepMs} (process of its own, boleta REST channel; EPR ${VERDICT_MS} ms after receipt)`,
    );
    console.log(`  topic partitions ${PARTITIONS}; one process per service (api with relay and projector)`);
    console.log(
      `  machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load at start ${load0.toFixed(1)}, at end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('\n[bench] results');
    const acceptS = (acceptedAt - t0) / 1000;
    console.log(
      `  POST /boletas/batch: p50 ${percentile(
        [...postMs].sort((a, b) => a - b),
        50,
      ).toFixed(
        0,
      )} ms, max ${Math.max(...postMs).toFixed(0)} ms per batch → ${(total / acceptS).toFixed(0)} boletas/s accepted (folio, document, outbox)`,
    );
    const e2eS = (endAt - t0) / 1000;
    console.log(
      `  to the SII verdict: ${done} EPR, ${failed} failed of ${total} in ${e2eS.toFixed(1)} s → ${(done / e2eS).toFixed(0)} boletas/s end to end (first POST → last EPR)${done + failed < total ? ' (DEADLINE REACHED: incomplete)' : ''}`,
    );
    if (eprAt.length > 1) {
      const span = (eprAt[eprAt.length - 1]! - eprAt[0]!) / 1000;
      const q = (f: number) => eprAt[Math.min(eprAt.length - 1, Math.floor(f * eprAt.length))]!;
      const steady = (q(0.9) - q(0.1)) / 1000;
      console.log(
        `  sustained verdicts (the SII's fixed latency left out): ${span > 0 ? ((eprAt.length - 1) / span).toFixed(0) : '∞'} boletas/s first EPR → last EPR (${span.toFixed(1)} s); ` +
          `${steady > 0 ? ((0.8 * eprAt.length) / steady).toFixed(0) : '∞'} boletas/s over the steady window (10th → 90th percentile EPR, ${steady.toFixed(1)} s)`,
      );
      console.log(
        `  per boleta POST → EPR (created_at → EPR observed_at): p50 ${percentile(e2eMs, 50).toFixed(0)} ms, p99 ${percentile(e2eMs, 99).toFixed(0)} ms`,
      );
    }
    console.log(`  envelopes: ${uploads[0]!.n} EnvioBOLETA, largest ${uploads[0]!.max}`);
    const svc = cpuS.slice(0, SERVICES.length).reduce((a, b) => a + b, 0);
    console.log(
      `  CPU seconds during the run: ${cpu}; the services ${((svc * 1000) / total).toFixed(2)} ms per boleta (their PostgreSQL, Kafka and Redis not counted)`,
    );
  } finally {
    await p.close();
  }
}

runMain(main);
