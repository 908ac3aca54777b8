/**
 * Benchmark of boletas through POST /boletas/batch (issue 16): boletas per second accepted by the
 * batch endpoint, and per second to the SII's verdict (EPR through the boleta REST channel), with
 * the api, signer, sii-uploader and sii-poller as real processes and the SII simulator as a
 * process, on the local stack (a schema and topic prefix of its own). Prints figures and the
 * configuration; asserts nothing about time. Bounded: gives up after BENCH_DEADLINE_S (100).
 *
 *   npm run bench:boletas
 *   BENCH_BATCHES=2 BENCH_BATCH_SIZE=1000 npm run bench:boletas
 *
 * BENCH_BATCHES (1), BENCH_BATCH_SIZE (1000, the spec's maximum), BENCH_UPLOAD_MAX_DOCS (500, the
 * EnvioBOLETA maximum), BENCH_UPLOAD_MAX_WAIT_MS (500), BENCH_SIM_REGISTER_MS (300),
 * BENCH_SIM_STEP_MS (50), BENCH_PARTITIONS (2).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { santiagoDate } from '@dte/engine';
import { SERVICES, startPipelineProcesses } from '../test/support/pipeline-harness';
import { runMain } from './bench/run-main';

const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const BATCHES = num('BENCH_BATCHES', 1);
const SIZE = num('BENCH_BATCH_SIZE', 1000);
const MAX_DOCS = num('BENCH_UPLOAD_MAX_DOCS', 500);
const WAIT_MS = num('BENCH_UPLOAD_MAX_WAIT_MS', 500);
const SIM = { registerMs: num('BENCH_SIM_REGISTER_MS', 300), stepMs: num('BENCH_SIM_STEP_MS', 50) };
const PARTITIONS = num('BENCH_PARTITIONS', 2);
const DEADLINE_S = num('BENCH_DEADLINE_S', 100);

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
      UPLOAD_MAX_DOCS: String(MAX_DOCS),
      UPLOAD_MAX_WAIT_MS: String(WAIT_MS),
      UPLOAD_SWEEP_MS: '200',
      POLL_FIRST_DELAY_MS: '300',
      POLL_BACKOFF_BASE_MS: '250',
      POLL_BACKOFF_FACTOR: '1.5',
      POLL_BACKOFF_MAX_MS: '1000',
      POLL_TICK_MS: '100',
      POLL_MAX_ATTEMPTS: '200',
    },
  });
  try {
    const total = BATCHES * SIZE;
    const co = await p.seedCompany({ tipos: [39, 41], folios: total + 10 });
    const db = p.db.dataSource;
    const procs = [...SERVICES.map((n) => p.services[n]), p.simulator];
    const cpu0 = procs.map((s) => s.cpuSeconds() ?? 0);
    const postMs: number[] = [];
    const batchIds: string[] = [];
    const t0 = Date.now();
    for (let b = 0; b < BATCHES; b++) {
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
      postMs.push(performance.now() - t);
      batchIds.push(body.batchId);
    }
    const acceptedAt = Date.now();
    const deadline = started + DEADLINE_S * 1000;
    let done = 0;
    let failed = 0;
    for (;;) {
      const r: { done: number; failed: number }[] = await db.query(
        `SELECT count(*) FILTER (WHERE sii_status = 'EPR')::int AS done,
                count(*) FILTER (WHERE sii_status IN ('RCH', 'RSC', 'RFR', 'RCT', 'emision_fallida', 'stuck'))::int AS failed
           FROM dtes WHERE batch_id = ANY($1::uuid[])`,
        [batchIds],
      );
      done = r[0]!.done;
      failed = r[0]!.failed;
      if (done + failed >= total) break;
      if (Date.now() > deadline) break;
      await sleep(200);
    }
    const endAt = Date.now();
    const cpu = procs.map((s, i) => `${s.name} ${((s.cpuSeconds() ?? 0) - cpu0[i]!).toFixed(1)}`).join(', ');
    const uploads: { n: number; max: number }[] = await db.query(
      `SELECT count(*)::int AS n, coalesce(max(cardinality(dte_ids)), 0)::int AS max FROM sii_uploads WHERE channel = 'boleta'`,
    );
    console.log('\n[bench] configuration');
    console.log(
      `  ${BATCHES} batch(es) of ${SIZE} boletas (3 of 4 type 39, 1 of 4 type 41), posted one after another`,
    );
    console.log(
      `  uploader: UPLOAD_MAX_DOCS ${MAX_DOCS} (EnvioBOLETA holds 500), UPLOAD_MAX_WAIT_MS ${WAIT_MS}`,
    );
    console.log('  poller: first 300 ms, backoff 250 ms x1.5 up to 1000 ms, tick 100 ms');
    console.log(
      `  simulator: registerMs ${SIM.registerMs}, stepMs ${SIM.stepMs} (process of its own, boleta REST channel)`,
    );
    console.log(`  topic partitions ${PARTITIONS}; one process per service (api with relay and projector)`);
    console.log(
      `  machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('\n[bench] results');
    const acceptS = (acceptedAt - t0) / 1000;
    console.log(
      `  POST /boletas/batch: ${postMs.map((m) => `${m.toFixed(0)} ms`).join(', ')} → ${(total / acceptS).toFixed(0)} boletas/s accepted (folio, document, outbox)`,
    );
    const e2eS = (endAt - t0) / 1000;
    console.log(
      `  to the SII verdict: ${done} EPR, ${failed} failed of ${total} in ${e2eS.toFixed(1)} s → ${(done / e2eS).toFixed(0)} boletas/s end to end${done + failed < total ? ' (DEADLINE REACHED: incomplete)' : ''}`,
    );
    console.log(`  envelopes: ${uploads[0]!.n} EnvioBOLETA, largest ${uploads[0]!.max}`);
    console.log(`  CPU seconds during the run: ${cpu}`);
  } finally {
    await p.close();
  }
}

runMain(main);
