// Summarises a V8 .cpuprofile (Chrome DevTools format, as scripts/bench/cpu-profile.mjs or
// POST_CPU_PROFILE of post-cpu.ts write): self and total time per function and per file.
//
//   node scripts/bench/profile-summary.mjs file.cpuprofile [TOP=30] [--per=N] [--cap=MS]
//
// --per=N divides the milliseconds by N (e.g. the documents of the run) to print ms per document.
// --cap=MS counts a sample for at most MS milliseconds (e.g. 2 with the 1 ms sampling interval):
// the profiler's clock is wall time, so a thread preempted inside a syscall (a socket write that
// woke its reader on a busy 2-core machine) shows one long sample on that frame; capping keeps
// the picture close to CPU time.
// "total" counts a function (or a file) once per sample however often it is on the stack.
import fs from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const top = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
const per = Number((args.find((a) => a.startsWith('--per=')) ?? '--per=1').slice(6));
const cap = Number((args.find((a) => a.startsWith('--cap=')) ?? '--cap=Infinity').slice(6));
if (!file) {
  console.error('usage: node scripts/bench/profile-summary.mjs file.cpuprofile [TOP] [--per=N] [--cap=MS]');
  process.exit(2);
}
const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const cwd = process.cwd() + '/';
const fileOf = (cf) => {
  const u = cf.url || `(${cf.functionName || 'native'})`;
  return u
    .replace(/^file:\/\//, '')
    .replace(cwd, '')
    .replace(/^.*node_modules\//, 'node_modules/');
};
const fnOf = (cf) => `${cf.functionName || '(anonymous)'} ${fileOf(cf)}:${cf.lineNumber + 1}`;

// time per sample: the deltas (microseconds)
const dt = new Map();
const { samples, timeDeltas } = prof;
for (let i = 0; i < samples.length; i++) {
  const d = Math.min(cap, (timeDeltas[i + 1] ?? timeDeltas[i] ?? 0) / 1000);
  dt.set(samples[i], (dt.get(samples[i]) ?? 0) + d);
}
const selfFn = new Map(),
  selfFile = new Map(),
  totFn = new Map(),
  totFile = new Map();
let all = 0;
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
for (const [id, ms] of dt) {
  all += ms;
  const n = byId.get(id);
  add(selfFn, fnOf(n.callFrame), ms);
  add(selfFile, fileOf(n.callFrame), ms);
  const fns = new Set(),
    files = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const cf = byId.get(cur).callFrame;
    fns.add(fnOf(cf));
    files.add(fileOf(cf));
  }
  for (const f of fns) add(totFn, f, ms);
  for (const f of files) add(totFile, f, ms);
}
const print = (title, m) => {
  console.log(`\n== ${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(v / per).toFixed(3).padStart(9)} ${((100 * v) / all).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${file}: ${(all / per).toFixed(2)} ms${per !== 1 ? ` per unit (/${per})` : ''} sampled`);
print('self by function', selfFn);
print('self by file', selfFile);
print('total by function', totFn);
print('total by file', totFile);
