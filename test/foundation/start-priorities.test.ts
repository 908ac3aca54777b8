// `npm start` (scripts/start-local.sh) runs the api at nice 0 and the pipeline's workers and the SII
// simulator at PIPELINE_NICE (10), each service in a session of its own. Linux's autogroup
// scheduling shares the CPU between sessions first and applies a process's nice only inside its
// session, so a worker at nice 10 alone in its session used to get as much CPU as the api under
// load: exec_in_session (scripts/stack/lib.sh) sets the session's nice too. Checked the way the
// services feel it: busy processes started by that function, two at nice 0 and two at nice 10
// (four sessions on this 2-core machine), and the CPU time each got.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

import { repoRoot } from '../support/env';

const lib = path.join(repoRoot, 'scripts/stack/lib.sh');

/** the process's user + system CPU time, in clock ticks (/proc/<pid>/stat fields 14 and 15) */
function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** the nice of the process (field 19) */
function niceOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** an endless busy loop started by exec_in_session at `nice`, once it runs as that loop */
async function busyAt(nice: number): Promise<ChildProcess> {
  const child = spawn(
    'bash',
    ['-c', `. "${lib}"; exec_in_session "$1" bash -c 'while :; do :; done'`, 'busy', String(nice)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const deadline = Date.now() + 10_000;
  // the pid stays the same through setsid, nice and the exec: ready once the session is its own
  for (;;) {
    const sid = Number(fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[3]);
    if (sid === child.pid && niceOf(child.pid!) === nice) return child;
    if (Date.now() > deadline) throw new Error(`the busy loop at nice ${nice} never ran in its own session`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("npm start: the pipeline's workers yield the CPU to the api", function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  it('processes started at nice 10 in sessions of their own get a small share beside nice 0 ones', async function () {
    if (!fs.existsSync('/proc/self/autogroup')) this.skip(); // no autogroups: nice alone does it
    const api = [await busyAt(0), await busyAt(0)];
    const workers = [await busyAt(10), await busyAt(10)];
    children.push(...api, ...workers);
    for (const w of workers)
      expect(fs.readFileSync(`/proc/${w.pid}/autogroup`, 'utf8')).to.match(/ nice 10\n?$/);
    const before = [...api, ...workers].map((c) => cpuTicks(c.pid!));
    await new Promise((r) => setTimeout(r, 3000));
    const got = [...api, ...workers].map((c, i) => cpuTicks(c.pid!) - before[i]!);
    const apiTicks = got[0]! + got[1]!;
    const workerTicks = got[2]! + got[3]!;
    // equal sessions would split the 2 cores evenly (ratio 1); nice 0 against 10 is 1024 : 110
    expect(apiTicks, `nice 0: ${apiTicks} ticks, nice 10: ${workerTicks} ticks`).to.be.above(3 * workerTicks);
  });
});
