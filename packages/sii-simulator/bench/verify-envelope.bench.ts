/**
 * CPU the simulator spends judging an uploaded EnvioDTE, per document: the same function the
 * DTEUpload route runs once the multipart form is read (receiveEnvioDte: STATUS 7 check, schema,
 * envelope and DTE signatures, Carátula, TEDs, CAF FRMAs, arithmetic, the upload's record with
 * its totals), called directly on envelopes built and signed beforehand with @dte/engine (their
 * signing is not measured). Every envelope must come out EPR with all documents accepted.
 *
 * Figures: the process's own CPU (process.cpuUsage) and, apart, the CPU of the children of the
 * schema check (10 ms ticks from /proc: the ended xmllint runs, one per envelope, with
 * DTE_SCHEMA_ENGINE=system; the live resident validator with the default engine), per document,
 * per round; the median round is the figure.
 *
 * Run: npx tsx packages/sii-simulator/bench/verify-envelope.bench.ts   (npm run bench -w @dte/sii-simulator)
 * BENCH_DOCS_PER_ENVELOPE (default 20, about what the uploader sends in bench:pipeline),
 * BENCH_ENVELOPES per round (25), BENCH_ROUNDS (3), BENCH_CAF_BITS (1024, as granted by default);
 * DTE_SCHEMA_ENGINE (auto: the resident validator; system: one xmllint per envelope).
 */
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { receiveEnvioDte } from '../src/routes/upload';
import type { Sim } from '../src/sim';
import { COMPANY, envelope, factura, SENDER, signDte, World } from '../test/support/world';

const perEnvelope = Number(process.env.BENCH_DOCS_PER_ENVELOPE ?? 20);
const envelopes = Number(process.env.BENCH_ENVELOPES ?? 25);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const cafBits = Number(process.env.BENCH_CAF_BITS ?? 1024);

/** CPU ms of a /proc stat line's fields after the command: own (utime+stime) and waited-for children */
function statCpuMs(pid: number | 'self'): { own: number; children: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // f[0] is field 3 (state): utime, stime, cutime, cstime are fields 14 to 17 (10 ms ticks)
    return { own: (Number(f[11]) + Number(f[12])) * 10, children: (Number(f[13]) + Number(f[14])) * 10 };
  } catch {
    return undefined;
  }
}

/**
 * CPU ms of this process's schema validation children: the ended and waited-for ones (xmllint
 * runs, engine 'system') and the live ones (the resident validator, engine 'resident'/'auto').
 */
function childrenCpuMs(): number {
  let ms = statCpuMs('self')!.children;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
    } catch {
      continue;
    }
    ms += statCpuMs(Number(name))?.own ?? 0;
  }
  return ms;
}

function commit(): string {
  try {
    const head = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    const dirty = execSync('git status --porcelain -- packages', { encoding: 'utf8' }).trim()
      ? '+changes'
      : '';
    return head + dirty;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const w = await World.start({ cafKeyBits: cafBits });
  await w.enrol('cert');
  await w.login('cert');
  const total = (rounds * envelopes + 1) * perEnvelope;
  const caf = await w.grantCaf('cert', 33, total);
  const sim: Sim = { state: w.sim.state, options: w.sim.options, siiKeys: w.sim.siiKeys };
  let folio = caf.desde - 1;
  const build = (): Buffer =>
    envelope(Array.from({ length: perEnvelope }, () => signDte(factura(++folio), caf)));
  let n = 0;
  const receive = async (data: Buffer): Promise<void> => {
    const r = await receiveEnvioDte(sim, 'cert', {
      sender: SENDER,
      company: COMPANY,
      file: { name: `envio-${++n}.xml`, data },
      sha256: createHash('sha256').update(data).digest('hex'),
      trigger: undefined,
      now: sim.state.now(),
    });
    const up = r.status === 0 ? sim.state.env.cert.uploads.get(r.trackId) : undefined;
    const accepted = up?.documents.filter((d) => d.result === 'ACEPTADO').length;
    if (up?.verdict !== 'EPR' || accepted !== perEnvelope)
      throw new Error(
        `unexpected outcome: status ${r.status}, ${up?.verdict}, ${JSON.stringify(up?.errors)}`,
      );
  };

  await receive(build()); // warm-up: modules, JIT, caches
  const load0 = loadavg()[0]!;
  const results: { own: number; xmllint: number; wall: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const files = Array.from({ length: envelopes }, build);
    const cpu0 = process.cpuUsage();
    const kids0 = childrenCpuMs();
    const t0 = performance.now();
    for (const f of files) await receive(f);
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const docs = envelopes * perEnvelope;
    results.push({
      own: (cpu.user + cpu.system) / 1000 / docs,
      xmllint: (childrenCpuMs() - kids0) / docs,
      wall: wall / docs,
    });
  }
  await w.close();

  console.log(
    `sii-simulator receiveEnvioDte (DTEUpload's check path), commit ${commit()}, node ${process.version}: ` +
      `${rounds} rounds × ${envelopes} EnvioDTE × ${perEnvelope} type-33 DTE, CAF key ${cafBits} bits, ` +
      `signer RSA-2048, all EPR/ACEPTADO, schema engine ${process.env.DTE_SCHEMA_ENGINE ?? 'auto'}`,
  );
  results.forEach((x, i) =>
    console.log(
      `  round ${i + 1}: ${x.own.toFixed(2)} ms CPU per document in the process, ` +
        `+ ${x.xmllint.toFixed(2)} ms in schema children; wall ${x.wall.toFixed(2)} ms per document`,
    ),
  );
  const median = [...results].sort((a, b) => a.own - b.own)[Math.floor(results.length / 2)]!;
  console.log(
    `  median: ${median.own.toFixed(2)} ms CPU per document (process) + ${median.xmllint.toFixed(2)} ms (schema children: xmllint runs or resident validator); ` +
      `load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)} (2 cores, shared)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
