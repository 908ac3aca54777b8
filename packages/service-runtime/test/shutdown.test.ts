// SIGTERM to a real process using onShutdown: it drains (the closers run) and exits 0 within the
// grace period, or says the drain did not finish and exits 1 when the grace runs out.
import { spawn } from 'node:child_process';
import path from 'node:path';

import { expect } from 'chai';

const FIXTURE = path.join(__dirname, 'fixtures', 'drain.ts');

async function runAndTerm(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!out.includes('drain fixture ready') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect(out, 'the fixture started').to.include('drain fixture ready');
  child.kill('SIGTERM');
  const code = await exited;
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; graceMs?: number });
  return { code, msgs: lines.map((l) => l.msg), lines };
}

describe('service-runtime: SIGTERM drains within the grace period', function () {
  this.timeout(60_000);

  it('runs the closers and exits 0 when the drain ends in time', async () => {
    const r = await runAndTerm({ DRAIN_MS: '300', SHUTDOWN_GRACE_MS: '5000' });
    expect(r.code).to.equal(0);
    expect(r.msgs).to.include.members(['shutting down: draining', 'shut down: drained']);
    expect(r.lines.find((l) => l.msg === 'shutting down: draining')?.graceMs).to.equal(5000);
  });

  it('exits 1 saying so when the drain outlasts SHUTDOWN_GRACE_MS', async () => {
    const r = await runAndTerm({ DRAIN_MS: 'never', SHUTDOWN_GRACE_MS: '700' });
    expect(r.code).to.equal(1);
    expect(r.msgs).to.include('shutdown: the drain did not finish within the grace period; exiting');
    expect(r.msgs).to.not.include('shut down: drained');
  });
});
