/**
 * CPU of POST /dtes alone: an in-process api (the test api on a fresh schema of the local stack,
 * no pipeline) answers POSTS documents from CONCURRENCY clients; prints the CPU milliseconds per
 * POST of this process (api and client together) and of the PostgreSQL backends serving it
 * (found by application_name, as bench:pipeline does), with the statements per POST.
 *
 *   npx tsx scripts/bench/post-cpu.ts        # POSTS=1000 CONCURRENCY=8, type 33
 *   POST_CPU_PROFILE=/tmp/x.cpuprofile npx tsx scripts/bench/post-cpu.ts
 *     # also writes a CPU profile of the measured POSTs only (no start-up, no warm-up);
 *     # summarise it with `node scripts/bench/profile-summary.mjs /tmp/x.cpuprofile`
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import { startTestApi } from '../../services/api/test/support/test-api';
import { body, emit, orgWithCafs } from '../../services/api/test/dtes-fixtures';
import { ownBackends } from './process-cpu';
import { runMain } from './run-main';

const POSTS = Number(process.env.POSTS ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const PROFILE = process.env.POST_CPU_PROFILE;

/** starts the V8 sampling profiler (1 ms); the returned function stops it and writes the profile */
function startProfile(file: string): () => Promise<void> {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))),
    );
  const started = post('Profiler.enable')
    .then(() => post('Profiler.setSamplingInterval', { interval: 1000 }))
    .then(() => post('Profiler.start'));
  return async () => {
    await started;
    const res = (await post('Profiler.stop')) as { profile: unknown };
    fs.writeFileSync(file, JSON.stringify(res.profile));
    session.disconnect();
  };
}

async function main(): Promise<void> {
  const t = await startTestApi();
  try {
    const o = await orgWithCafs(t, { tipos: [33], hasta: POSTS + 200 });
    // warm-up, CONCURRENCY at a time so the pool holds its connections before counting
    for (let i = 0; i < 50; i += CONCURRENCY)
      await Promise.all(
        Array.from({ length: CONCURRENCY }, (_, j) => emit(t, o, body(33, o.rut, 100 + i + j))),
      );
    // this process's connections to PostgreSQL (the test api's pool sets no application_name)
    const { pids: pgPids, cpuSeconds: pgCpu } = await ownBackends(t.db.dataSource, process.env.DATABASE_URL!);
    const stopProfile = PROFILE ? startProfile(PROFILE) : undefined;
    const c0 = process.cpuUsage();
    const pg0 = pgCpu();
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < POSTS) {
          const i = next++;
          const r = await emit(t, o, body(33, o.rut, 1000 + i));
          if (r.status !== 202) throw new Error(`POST ${r.status} ${r.text}`);
        }
      }),
    );
    const ms = Date.now() - t0;
    const c = process.cpuUsage(c0);
    const pg = pgCpu() - pg0;
    await stopProfile?.();
    console.log(
      `[post-cpu] ${POSTS} POST /dtes (type 33), ${CONCURRENCY} clients, in-process api, no pipeline; load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    console.log(`  ${(POSTS / (ms / 1000)).toFixed(0)} POST/s`);
    console.log(
      `  CPU per POST: this process (api + client) ${((c.user + c.system) / 1000 / POSTS).toFixed(2)} ms (user ${(c.user / 1000 / POSTS).toFixed(2)}, system ${(c.system / 1000 / POSTS).toFixed(2)}), its PostgreSQL backends (${pgPids.length}) ${((pg * 1000) / POSTS).toFixed(2)} ms`,
    );
  } finally {
    await t.close();
  }
}

runMain(main);
