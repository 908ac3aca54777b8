/**
 * What a write refused by the in-flight cap (services/api/src/http/inflight-limit.ts) costs, beside
 * the cheapest request the api answers (GET /healthz) and an accepted POST /dtes. A real api on a
 * free port (services/api/test/support/test-api.ts: fresh PostgreSQL schema, Redis, simulator) with
 * API_MAX_INFLIGHT=1; the cap is held full by one POST waiting at its CAF row, which this script
 * locks. Client and api share this process: the CPU figures are of both (node's fetch included),
 * so compare the rows with one another.
 *
 *   npx tsx scripts/bench/inflight-refusal.ts      # N=3000 CONCURRENCY=16 ACCEPTED=300
 *
 * GOODPUT=<cap> instead measures accepted POST /dtes per second under overload: CLIENTS (64)
 * closed-loop clients of one company post for SECONDS (10) against API_MAX_INFLIGHT=<cap> (0: no
 * cap), a refused one posting again after Retry-After × a jitter of 0.5-1.5; accepted/s, refused/s and the p50/p99 of the
 * accepted ones' latency.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { startTestApi } from '../../services/api/test/support/test-api';
import { body, emit, holdCompanyFolios, orgWithCafs } from '../../services/api/test/dtes-fixtures';
import { runMain } from './run-main';

const N = Number(process.env.N ?? 3000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const ACCEPTED = Number(process.env.ACCEPTED ?? 300);

async function timed(
  label: string,
  n: number,
  concurrency: number,
  one: (i: number) => Promise<number>,
  expected: number,
) {
  let next = 0;
  let wrong = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) if ((await one(next++)) !== expected) wrong += 1;
    }),
  );
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const ms = (cpu.user + cpu.system) / 1000 / n;
  console.log(
    `  ${label.padEnd(44)} ${String(n).padStart(5)} requests, ${concurrency} at once: ${(n / wall).toFixed(0).padStart(5)} req/s, CPU ${ms.toFixed(3)} ms per request${wrong ? `; ${wrong} not ${expected}!` : ''}`,
  );
}

async function goodput(cap: string): Promise<void> {
  const clients = Number(process.env.CLIENTS ?? 64);
  const seconds = Number(process.env.SECONDS ?? 10);
  const t = await startTestApi({ env: { API_MAX_INFLIGHT: cap, API_MAX_INFLIGHT_PER_ORG: '0' } });
  try {
    const o = await orgWithCafs(t, { tipos: [33], hasta: 100_000 });
    for (let i = 0; i < 20; i++) await emit(t, o, body(33, o.rut, 1000 + i));
    const load0 = loadavg()[0]!;
    const lat: number[] = [];
    let refused = 0;
    const end = Date.now() + seconds * 1000;
    const cpu0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        while (Date.now() < end) {
          const t0 = performance.now();
          const r = await emit(t, o, body(33, o.rut, 2000 + c));
          if (r.status === 202) lat.push(performance.now() - t0);
          else if (r.status === 429) {
            // as the spec asks of clients: wait Retry-After, with jitter, before posting again
            refused += 1;
            const after = Number(r.headers.get('retry-after') ?? 1) * 1000;
            await new Promise((res) => setTimeout(res, after * (0.5 + Math.random())));
          } else throw new Error(`${r.status} ${r.text}`);
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    lat.sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(0);
    console.log(
      `[inflight-refusal goodput] API_MAX_INFLIGHT=${cap}, ${clients} closed-loop clients of one company, ${seconds} s: accepted ${(lat.length / seconds).toFixed(1)}/s (latency p50 ${q(0.5)} ms, p99 ${q(0.99)} ms), refused ${(refused / seconds).toFixed(1)}/s; CPU of this process (client + api) ${((cpu.user + cpu.system) / 1e6 / seconds).toFixed(2)} s/s; load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
    );
  } finally {
    await t.close();
  }
}

async function main(): Promise<void> {
  if (process.env.GOODPUT !== undefined) return goodput(process.env.GOODPUT);
  const t = await startTestApi({ env: { API_MAX_INFLIGHT: '1', API_INFLIGHT_RETRY_AFTER_SEC: '1' } });
  try {
    const o = await orgWithCafs(t, { tipos: [33], hasta: ACCEPTED + 100 });
    const root = t.url.replace(/\/api\/v1$/, '');
    console.log(
      `[inflight-refusal] api on ${root} (API_MAX_INFLIGHT=1), node ${process.version}; load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    // warm-up of both paths
    for (let i = 0; i < 50; i++) await fetch(`${root}/healthz`).then((r) => r.text());
    for (let i = 0; i < 20; i++) await emit(t, o, body(33, o.rut, 1000 + i));

    const hold = await holdCompanyFolios(t, o);
    const held = emit(t, o, body(33, o.rut, 999));
    while ((await emit(t, o, body(33, o.rut, 1))).status !== 429) await new Promise((r) => setTimeout(r, 10));

    const payload = body(33, o.rut, 2000);
    await timed(
      'GET /healthz',
      N,
      CONCURRENCY,
      async () => (await fetch(`${root}/healthz`).then(async (r) => (await r.text(), r.status))) as number,
      200,
    );
    await timed(
      'POST /dtes refused (429 rate_limit)',
      N,
      CONCURRENCY,
      async () => (await emit(t, o, payload, { idem: randomUUID() })).status,
      429,
    );
    await hold.release();
    await held;
    await timed(
      'POST /dtes accepted (202, one at a time)',
      ACCEPTED,
      1,
      async (i) => (await emit(t, o, body(33, o.rut, 3000 + i))).status,
      202,
    );
  } finally {
    await t.close();
  }
}

runMain(main);
