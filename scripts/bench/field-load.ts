/**
 * The external open-loop load of issue 27, against the deployment `npm start` runs (started, or
 * found running, by scripts/bench/field-load.sh, which also builds vegeta and passes its path).
 * Prints, per phase: the configuration, POST /dtes p50/p95/p99 (vegeta's, from the scheduled
 * instant), refused requests by status, verdicts per second sustained (from the first to the last
 * verdict of the phase's documents), the tail after the last POST, and the CPU per accepted
 * document of each process of the deployment (/proc: the services' process groups, the PostgreSQL
 * backends serving each, the simulator, and the shared Kafka broker, Redis and PostgreSQL's own
 * processes, which are an upper bound of this run's share). The first phase, when the script
 * started the deployment, is the cold one (within the first minute after the services were
 * ready); the others are the warm system.
 *
 * Environment (field-load.sh sets the first ones):
 *   FIELD_VEGETA           vegeta binary
 *   FIELD_STACK_DIR        the deployment's state (.stack): pid files of the services, demo.env
 *                          (the demo issuer: DTE_API_URL, DTE_API_KEY, DTE_CERT_ID, DTE_RUT_EMISOR)
 *   FIELD_READY_FILE       a file field-load.sh writes when npm start is ready (epoch ms): this
 *                          process starts beside npm start and waits for it, so the cold phase
 *                          begins at once (tsx's own start takes tens of seconds on a loaded
 *                          machine); unset: a deployment that was already running, no cold phase
 *   FIELD_PHASES           rate×seconds, comma-separated (default 100x30,300x20): each one warm;
 *                          with FIELD_READY_AT_MS, the first one also cold first (cut to the
 *                          first minute after start)
 *   FIELD_VERDICT_WAIT_S   how long to wait for a phase's verdicts after its last POST (120)
 *   DATABASE_URL, DATABASE_SCHEMA  the deployment's database (to read the verdicts)
 *   KAFKA_BROKERS, REDIS_URL       to find the shared broker and Redis by their ports
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createDataSource } from '@dte/database';
import { classify } from '@dte/status';
import type { DataSource } from 'typeorm';
import { emissionBody, percentile } from '../../test/support/pipeline-harness';
import { CpuAccount, backendsOf, pidListeningOn, postgresAuxiliary, type BackendQuery } from './process-cpu';
import { runMain } from './run-main';

const env = (name: string, dflt?: string): string => {
  const v = process.env[name] ?? dflt;
  if (v === undefined || v === '')
    throw new Error(`${name} is required (scripts/bench/field-load.sh sets it)`);
  return v;
};

const VEGETA = env('FIELD_VEGETA');
const STACK_DIR = env('FIELD_STACK_DIR');
const READY_FILE = process.env.FIELD_READY_FILE;

/** When npm start was ready (epoch ms; waits for field-load.sh to say so), or undefined when it already ran. */
async function readyAt(): Promise<number | undefined> {
  if (!READY_FILE) return undefined;
  for (;;) {
    const text = fs.existsSync(READY_FILE) ? fs.readFileSync(READY_FILE, 'utf8').trim() : '';
    if (text === 'failed') throw new Error('npm start failed (see above)');
    if (/^\d+$/.test(text)) return Number(text);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The demo issuer npm start seeded (DTE_STACK_DIR/demo.env). */
function demoIssuer(): { url: string; key: string; certId: string; rut: string } {
  const v: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(STACK_DIR, 'demo.env'), 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m) v[m[1]!] = m[2]!;
  }
  if (!v.DTE_API_URL || !v.DTE_API_KEY || !v.DTE_CERT_ID || !v.DTE_RUT_EMISOR)
    throw new Error(`${STACK_DIR}/demo.env lacks the demo issuer (npm start with DTE_DEMO_SEED unset)`);
  return { url: v.DTE_API_URL, key: v.DTE_API_KEY, certId: v.DTE_CERT_ID, rut: v.DTE_RUT_EMISOR };
}

let READY_AT: number | undefined;
let API_URL = '';
let API_KEY = '';
let CERT_ID = '';
let RUT = '';
const VERDICT_WAIT_MS = Number(process.env.FIELD_VERDICT_WAIT_S ?? 120) * 1000;
const COLD_WINDOW_MS = 60_000;
const SERVICES = ['api', 'signer', 'sii-uploader', 'sii-poller', 'webhooks', 'rcv-sync', 'sii-simulator'];

interface Phase {
  label: 'cold' | 'warm';
  rate: number;
  seconds: number;
}

interface PhaseResult extends Phase {
  sent: number;
  byStatus: Map<number, number>;
  latencyMs: number[];
  verdicts: number;
  verdictsPerSec: number;
  tailMs: number;
  pending: number;
  cpu: { name: string; seconds: number }[];
  startedAfterReadyS?: number;
}

function phases(): Phase[] {
  const list = (process.env.FIELD_PHASES ?? '100x30,300x20').split(',').map((p) => {
    const m = /^(\d+)x(\d+)$/.exec(p.trim());
    if (!m) throw new Error(`FIELD_PHASES: "${p}" is not rate×seconds (e.g. 100x30)`);
    return { rate: Number(m[1]), seconds: Number(m[2]) };
  });
  const out: Phase[] = [];
  if (READY_AT !== undefined) {
    const first = list[0]!;
    const left = Math.floor((READY_AT + COLD_WINDOW_MS - Date.now()) / 1000);
    if (left >= 5) out.push({ label: 'cold', rate: first.rate, seconds: Math.min(first.seconds, left) });
    else console.log(`[field] more than a minute since npm start was ready: no cold phase`);
  }
  return [...out, ...list.map((p) => ({ label: 'warm' as const, ...p }))];
}

/** The pids of a process group (a service started by start-local.sh leads its own session). */
function groupOf(leader: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp === leader) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

function leaderOf(service: string): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(STACK_DIR, 'run', `svc-${service}.pid`), 'utf8').trim());
  } catch {
    return undefined;
  }
}

const portOf = (url: string | undefined, dflt: number): number => {
  if (!url) return dflt;
  const first = url.split(',')[0]!.trim();
  const m = /:(\d+)(?:\/|$)/.exec(first.includes('://') ? first : `x://${first}`);
  return m ? Number(m[1]) : dflt;
};

function cpuAccount(db: DataSource): CpuAccount {
  let activity: { at: number; rows: Awaited<ReturnType<BackendQuery>> } | undefined;
  const backends: BackendQuery = async () => {
    if (!activity || Date.now() - activity.at > 500)
      activity = {
        at: Date.now(),
        rows: await db.query(
          `SELECT pid, application_name, backend_type FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
        ),
      };
    return activity.rows;
  };
  const cpu = new CpuAccount();
  for (const s of SERVICES) {
    const pids = () => {
      const leader = leaderOf(s);
      return leader ? groupOf(leader) : [];
    };
    cpu.add(s, pids, { children: s === 'sii-simulator' });
    if (s !== 'sii-simulator')
      cpu.add(`postgres for ${s}`, async () =>
        (await Promise.all(pids().map((pid) => backendsOf(pid, backends)))).flat(),
      );
  }
  const pgPort = portOf(process.env.DATABASE_URL, 15432);
  cpu.add('postgres own processes (shared)', () => postgresAuxiliary(pidListeningOn(pgPort), backends));
  const kafka = pidListeningOn(portOf(process.env.KAFKA_BROKERS, 19092));
  cpu.add('kafka broker (shared)', () => (kafka ? [kafka] : []));
  const redis = pidListeningOn(portOf(process.env.REDIS_URL, 16379));
  cpu.add('redis (shared)', () => (redis ? [redis] : []));
  return cpu;
}

/** Folios enough for `n` more documents of type 33 (POST /caf/request, 10 000 at a time). */
async function ensureFolios(db: DataSource, n: number): Promise<void> {
  const [{ left }]: { left: number }[] = await db.query(
    `SELECT COALESCE(sum(hasta - next_folio + 1), 0)::int AS left FROM cafs
      WHERE rut_emisor = $1 AND tipo_dte = 33 AND environment = 'cert' AND deleted_at IS NULL
        AND (expires_at IS NULL OR expires_at > now())`,
    [RUT],
  );
  let missing = n - left;
  while (missing > 0) {
    // as many as one request gives: the next phases find them, and a paced request waits less often
    const cantidad = 10_000;
    const res = await fetch(`${API_URL}/caf/request`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'content-type': 'application/json',
        'x-cert-id': CERT_ID,
      },
      body: JSON.stringify({ tipo_dte: 33, cantidad }),
    });
    if (res.status === 409) {
      // a folio request of this type just finished (the seed's): asked again after its Retry-After
      const wait = Number(res.headers.get('retry-after') ?? 60);
      console.log(`[field] folios: a request of type 33 just finished; asking again in ${wait} s`);
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue;
    }
    if (!res.ok) throw new Error(`POST /caf/request ${cantidad}: ${res.status} ${await res.text()}`);
    missing -= cantidad;
  }
}

/** vegeta's JSON targets: one POST /dtes per request, each with its own Idempotency-Key. */
function writeTargets(file: string, n: number): string[] {
  const keys: string[] = [];
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = randomUUID();
    keys.push(key);
    const body = Buffer.from(JSON.stringify(emissionBody(33, RUT, 1000 + (i % 5000)))).toString('base64');
    lines.push(
      JSON.stringify({
        method: 'POST',
        url: `${API_URL}/dtes`,
        header: {
          Authorization: [`Bearer ${API_KEY}`],
          'Content-Type': ['application/json'],
          'Idempotency-Key': [key],
        },
        body,
      }),
    );
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return keys;
}

async function attack(p: Phase, dir: string): Promise<{ keys: string[]; results: string }> {
  const targets = path.join(dir, `targets-${p.label}-${p.rate}.json`);
  const results = path.join(dir, `results-${p.label}-${p.rate}.bin`);
  const keys = writeTargets(targets, p.rate * p.seconds);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      VEGETA,
      [
        'attack',
        '-format=json',
        `-targets=${targets}`,
        '-lazy',
        `-rate=${p.rate}/1s`,
        `-duration=${p.seconds}s`,
        '-keepalive=true',
        '-timeout=30s',
        `-output=${results}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`vegeta attack exited ${code}`))));
  });
  return { keys, results };
}

async function readResults(file: string): Promise<{ code: number; latencyMs: number }[]> {
  const child = spawn(VEGETA, ['encode', '-to', 'json', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const out: { code: number; latencyMs: number }[] = [];
  for await (const line of readline.createInterface({ input: child.stdout })) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { code: number; latency: number };
    out.push({ code: r.code, latencyMs: r.latency / 1e6 });
  }
  return out;
}

/** Waits for the verdicts of the documents issued under `keys`; their count, rate and tail. */
async function verdicts(
  db: DataSource,
  keys: string[],
  accepted: number,
  endedAt: number,
): Promise<{ verdicts: number; perSec: number; tailMs: number; pending: number }> {
  const deadline = Date.now() + VERDICT_WAIT_MS;
  for (;;) {
    const rows: { sii_status: string; observed_at: Date }[] = await db.query(
      `SELECT sii_status, observed_at FROM dtes WHERE idempotency_key = ANY($1::text[])`,
      [keys],
    );
    const done = rows.filter((r) => classify(r.sii_status).terminal);
    if (done.length >= accepted || Date.now() > deadline) {
      const times = done.map((r) => new Date(r.observed_at).getTime()).sort((a, b) => a - b);
      const span = times.length > 1 ? (times.at(-1)! - times[0]!) / 1000 : 0;
      return {
        verdicts: done.length,
        perSec: span > 0 ? done.length / span : 0,
        tailMs: times.length ? times.at(-1)! - endedAt : 0,
        pending: rows.length - done.length,
      };
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function print(results: PhaseResult[]): void {
  const pad = (s: string, n: number) => s.padStart(n);
  console.log('\n[field] figures (open loop, vegeta keep-alive, a fresh Idempotency-Key per request)');
  console.log(
    `  ${'phase'.padEnd(5)} ${pad('POST/s', 6)} ${pad('s', 3)} ${pad('sent', 6)} ${pad('2xx', 6)} ${'refused (status: count)'.padEnd(24)} ${pad('p50', 7)} ${pad('p95', 7)} ${pad('p99', 7)} ${pad('verdicts/s', 10)} ${pad('tail', 7)}`,
  );
  for (const r of results) {
    const ok = [...r.byStatus].filter(([c]) => c >= 200 && c < 300).reduce((n, [, k]) => n + k, 0);
    const refused = [...r.byStatus]
      .filter(([c]) => c < 200 || c >= 300)
      .map(([c, k]) => `${c}: ${k}`)
      .join(', ');
    const q = (x: number) => `${percentile(r.latencyMs, x).toFixed(0)} ms`;
    console.log(
      `  ${r.label.padEnd(5)} ${pad(String(r.rate), 6)} ${pad(String(r.seconds), 3)} ${pad(String(r.sent), 6)} ${pad(String(ok), 6)} ${(refused || 'none').padEnd(24)} ${pad(q(50), 7)} ${pad(q(95), 7)} ${pad(q(99), 7)} ${pad(r.verdictsPerSec.toFixed(1), 10)} ${pad(`${(r.tailMs / 1000).toFixed(1)} s`, 7)}${r.pending ? `  (${r.pending} without a verdict yet)` : ''}`,
    );
  }
  console.log('\n[field] CPU ms per accepted document, per process (the shared ones are an upper bound)');
  const names = results[0]?.cpu.map((c) => c.name) ?? [];
  console.log(`  ${''.padEnd(34)} ${results.map((r) => pad(`${r.label} ${r.rate}/s`, 12)).join(' ')}`);
  const perDoc = (r: PhaseResult, s: number) => {
    const ok = [...r.byStatus].filter(([c]) => c >= 200 && c < 300).reduce((n, [, k]) => n + k, 0);
    return ok ? ((s * 1000) / ok).toFixed(2) : '-';
  };
  for (const name of names)
    console.log(
      `  ${name.padEnd(34)} ${results.map((r) => pad(perDoc(r, r.cpu.find((c) => c.name === name)!.seconds), 12)).join(' ')}`,
    );
  const total = (r: PhaseResult, sim: boolean) =>
    r.cpu.filter((c) => sim || c.name !== 'sii-simulator').reduce((s, c) => s + c.seconds, 0);
  console.log(
    `  ${'whole system'.padEnd(34)} ${results.map((r) => pad(perDoc(r, total(r, true)), 12)).join(' ')}`,
  );
  console.log(
    `  ${'  of which the service (no SII sim)'.padEnd(34)} ${results.map((r) => pad(perDoc(r, total(r, false)), 12)).join(' ')}`,
  );
}

async function main(): Promise<void> {
  READY_AT = await readyAt();
  ({ url: API_URL, key: API_KEY, certId: CERT_ID, rut: RUT } = demoIssuer());
  const plan = phases();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-field-'));
  const db = createDataSource({
    url: env('DATABASE_URL'),
    schema: process.env.DATABASE_SCHEMA || undefined,
    applicationName: 'field-load',
    poolSize: 2,
  });
  await db.initialize();
  try {
    const vegetaVersion =
      /Version: (\S+)/.exec(execFileSync(VEGETA, ['-version'], { encoding: 'utf8' }))?.[1] ?? VEGETA;
    console.log('[field] configuration');
    console.log(`  deployment: npm start (scripts/start-local.sh), api ${API_URL}, state ${STACK_DIR}`);
    console.log(
      `  SII simulator: register ${process.env.SII_SIMULATOR_REGISTER_MS ?? '2000'} ms, step ${process.env.SII_SIMULATOR_STEP_MS ?? '1000'} ms`,
    );
    console.log(`  load: vegeta (${vegetaVersion}), open loop, keep-alive, POST /dtes type 33 of ${RUT}`);
    console.log(`  phases: ${plan.map((p) => `${p.label} ${p.rate}/s × ${p.seconds} s`).join(', ')}`);
    const limits = ['RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW_SEC', 'API_MAX_INFLIGHT'].map(
      (k) => `${k}=${process.env[k] ?? "(the api's default)"}`,
    );
    console.log(`  api limits: ${limits.join(' ')}`);
    console.log(
      `  priorities: api nice 0, the pipeline's workers and the simulator nice ${process.env.PIPELINE_NICE ?? '10'} (PIPELINE_NICE)`,
    );
    console.log(
      `  machine: ${os.cpus().length} cores, load average (1 min) ${os.loadavg()[0]!.toFixed(1)} at start; measured on a shared machine: compare CPU ms/doc, not rates`,
    );
    const results: PhaseResult[] = [];
    for (const p of plan) {
      // a warm phase starts once the first minute after npm start is over
      if (p.label === 'warm' && READY_AT !== undefined && Date.now() < READY_AT + COLD_WINDOW_MS)
        await new Promise((r) => setTimeout(r, READY_AT! + COLD_WINDOW_MS - Date.now()));
      // each phase's folios just before it (the demo seed's cover the cold one): a folio request,
      // which the api paces per type, never delays the cold phase past the first minute
      await ensureFolios(db, p.rate * p.seconds);
      const cpu = cpuAccount(db);
      await cpu.start();
      const sampler = setInterval(() => void cpu.sample().catch(() => undefined), 1000);
      const startedAt = Date.now();
      console.log(
        `[field] ${p.label}: ${p.rate} POST/s for ${p.seconds} s${READY_AT ? ` (${((startedAt - READY_AT) / 1000).toFixed(0)} s after npm start was ready)` : ''} …`,
      );
      const { keys, results: file } = await attack(p, dir);
      const endedAt = Date.now();
      const rs = await readResults(file);
      const byStatus = new Map<number, number>();
      for (const r of rs) byStatus.set(r.code, (byStatus.get(r.code) ?? 0) + 1);
      const accepted = rs.filter((r) => r.code >= 200 && r.code < 300).length;
      const v = await verdicts(db, keys, accepted, endedAt);
      clearInterval(sampler);
      await cpu.sample();
      results.push({
        ...p,
        sent: rs.length,
        byStatus,
        latencyMs: rs.map((r) => r.latencyMs).sort((a, b) => a - b),
        verdicts: v.verdicts,
        verdictsPerSec: v.perSec,
        tailMs: v.tailMs,
        pending: v.pending,
        cpu: cpu.totals(),
        ...(READY_AT ? { startedAfterReadyS: (startedAt - READY_AT) / 1000 } : {}),
      });
    }
    print(results);
    console.log(
      `\n  machine: load average (1 min) ${os.loadavg()[0]!.toFixed(1)} at the end; vegeta files in ${dir}`,
    );
  } finally {
    await db.destroy();
  }
}

runMain(main);
