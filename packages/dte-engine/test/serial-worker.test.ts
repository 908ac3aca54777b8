import { spawnSync } from 'node:child_process';

import { expect } from 'chai';

import { SerialWorker } from '../src';
import { testJob, type TestJob, type TestJobResult } from './support/serial-jobs';

const JOBS = require.resolve('./support/serial-jobs');

class Busy extends Error {}
class TimedOut extends Error {}
class Lost extends Error {}

function runner(heapMb = 64): SerialWorker<TestJob, TestJobResult> {
  return new SerialWorker({
    handler: { module: JOBS, fn: testJob },
    name: 'test',
    heapMb,
    queueMax: 4,
    busy: () => new Busy('4 jobs are already waiting'),
    timedOut: (ms) => new TimedOut(`the job took longer than ${ms} ms; it is refused`),
    lost: (err) => new Lost(`the job was lost: ${err.message}`),
  });
}

type Run = { label: string; start: number; end: number };
const spin = (w: SerialWorker<TestJob, TestJobResult>, label: string, ms: number, timeoutMs = 5_000) =>
  w.run({ spin: label, ms }, { timeoutMs }) as Promise<Run>;
const settled = <T>(p: Promise<T>): Promise<T | Error> => p.catch((e: unknown) => e as Error);

describe('SerialWorker: one worker thread, one job at a time, each within its time limit', function () {
  it('runs jobs one at a time in arrival order, while the event loop keeps turning', async () => {
    const w = runner();
    await spin(w, 'warm', 1); // started (its start-up is not timed)
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const runs = await Promise.all(['a', 'b', 'c', 'd'].map((label) => spin(w, label, 80)));
    clearInterval(timer);
    expect(runs.map((r) => r.label)).to.deep.equal(['a', 'b', 'c', 'd']);
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.start, `${runs[i]!.label} started after ${runs[i - 1]!.label} ended`).to.be.at.least(
        runs[i - 1]!.end,
      );
    // 320 ms of jobs ran on the worker; this thread's 5 ms timer kept firing meanwhile
    expect(ticks).to.be.greaterThan(10);
  });

  it('refuses a job that outlives its limit with the clear error, and the next job still runs', async () => {
    const w = runner();
    await spin(w, 'warm', 1);
    const started = Date.now();
    const slow = spin(w, 'slow', 30_000, 200);
    const next = spin(w, 'next', 10);
    const err = await settled(slow);
    expect(err).to.be.instanceOf(TimedOut);
    expect((err as Error).message).to.equal('the job took longer than 200 ms; it is refused');
    expect(Date.now() - started, 'refused at its limit, not when the job would end').to.be.lessThan(5_000);
    // the stuck worker was terminated; a fresh one ran the job that waited behind it
    const after = await next;
    expect(after.label).to.equal('next');
    expect(after.start).to.be.at.least(started + 200);
  });

  it('refuses at once a job beyond queueMax waiting, and runs the ones it took', async () => {
    const w = runner();
    await spin(w, 'warm', 1); // started: the next job runs at once, the four after it wait
    const first = spin(w, 'running', 150);
    const waiting = ['w1', 'w2', 'w3', 'w4'].map((label) => spin(w, label, 1));
    const refused = await settled(spin(w, 'one too many', 1));
    expect(refused).to.be.instanceOf(Busy);
    expect((await first).label).to.equal('running');
    expect((await Promise.all(waiting)).map((r) => r.label)).to.deep.equal(['w1', 'w2', 'w3', 'w4']);
  });

  it("fails a job whose handler throws with the worker's name and the message; the worker goes on", async () => {
    const w = runner();
    const err = await settled(w.run({ throws: 'a bug' }, { timeoutMs: 5_000 }));
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.equal('the test worker failed: a bug');
    expect((await spin(w, 'after', 1)).label).to.equal('after');
  });

  it('fails the job that exhausts the capped heap as lost, and a fresh worker serves the next', async function () {
    this.timeout(60_000);
    const w = runner(32);
    const hog = settled(w.run({ hog: true }, { timeoutMs: 30_000 }));
    const next = spin(w, 'next', 1);
    const err = await hog;
    expect(err).to.be.instanceOf(Lost);
    expect((err as Error).message).to.match(/^the job was lost: .*memory/i);
    expect((await next).label).to.equal('next');
  });

  it('moves a transferred input to the worker (nothing of it stays here) and copies the rest', async () => {
    const w = runner();
    const moved = new Uint8Array(4096).fill(7);
    expect(await w.run({ bytes: moved }, { timeoutMs: 5_000, transfer: [moved.buffer] })).to.deep.equal({
      byteLength: 4096,
    });
    expect(moved.byteLength).to.equal(0);
    const copied = new Uint8Array(16).fill(7);
    expect(await w.run({ bytes: copied }, { timeoutMs: 5_000 })).to.deep.equal({ byteLength: 16 });
    expect([...copied]).to.deep.equal(Array(16).fill(7));
  });

  it('keeps a process alive while a job is in hand, and lets it exit once the worker is idle', function () {
    this.timeout(60_000);
    const started = Date.now();
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', require.resolve('./support/serial-worker-exit')],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.error, 'the process exited on its own').to.equal(undefined);
    expect(child.status, child.stderr).to.equal(0);
    expect(JSON.parse(child.stdout)).to.include({ label: 'answered' });
    expect(Date.now() - started).to.be.lessThan(30_000);
  });

  it('says so when the handler is not a function its module exports', async () => {
    const w = new SerialWorker({
      handler: { module: JOBS, fn: (): number => 1 },
      name: 'test',
      heapMb: 64,
      queueMax: 4,
      busy: () => new Busy(''),
      timedOut: () => new TimedOut(''),
    });
    const err = await settled(w.run(undefined, { timeoutMs: 5_000 }));
    expect((err as Error).message).to.match(/exports no function fn/);
  });
});
