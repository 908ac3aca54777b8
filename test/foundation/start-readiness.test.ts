// `npm start` (scripts/start-local.sh) waits for each service's GET /readyz, not only for its port:
// a service that listens while its PostgreSQL, Redis or Kafka is missing leaves a half-started
// system, so the start says FAILED with the service, the checks that fail and what to do about
// each; a service that dies meanwhile is named with the tail of its log. The function of
// scripts/stack/lib.sh is run by bash against real health servers (@dte/service-runtime), with a
// state folder of its own (DTE_STACK_DIR), so the local stack is not touched.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { startHealthServer, type HealthServer } from '@dte/service-runtime';

import { repoRoot } from '../support/env';

const lib = path.join(repoRoot, 'scripts/stack/lib.sh');

function waitReady(
  stateDir: string,
  name: string,
  pid: number,
  port: number,
  secs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', `. "${lib}"; wait_ready "$@"`, 'wait_ready', name, String(pid), String(port), String(secs)],
      { env: { ...process.env, DTE_STACK_DIR: stateDir }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm start: a service that listens but is not ready is reported, never left half-started', function () {
  this.timeout(60_000);
  let dir: string;
  let sleeper: ChildProcess;
  const servers: HealthServer[] = [];
  let kafkaUp = false;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-start-ready-'));
    fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'logs', 'signer.log'), 'signer: the last thing it said\n');
    // stands for the service's process (alive while the test runs)
    sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
  });
  after(async () => {
    sleeper?.kill('SIGKILL');
    for (const s of servers) await s.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names the failing checks and how to fix each when /readyz keeps answering 503', async () => {
    const health = await startHealthServer(0, [
      { name: 'database', check: async () => undefined },
      {
        name: 'kafka',
        check: async () => {
          throw new Error('connection refused');
        },
      },
    ]);
    servers.push(health);
    const out = await waitReady(dir, 'signer', sleeper.pid!, health.port, 2);
    expect(out.code).to.equal(1);
    expect(out.stderr).to.include(
      `FAILED: signer: listening on ${health.port} but not ready after 2s (GET /readyz answered 503, failing: kafka)`,
    );
    expect(out.stderr).to.include('Kafka does not answer: npm run stack -- status, then npm run stack -- up');
    expect(out.stderr, 'the tail of its log').to.include('signer: the last thing it said');
    expect(out.stderr).to.not.include('PostgreSQL');
  });

  it('returns as soon as the service becomes ready', async () => {
    const health = await startHealthServer(0, [
      {
        name: 'kafka',
        check: async () => {
          if (!kafkaUp) throw new Error('not yet');
        },
      },
    ]);
    servers.push(health);
    setTimeout(() => (kafkaUp = true), 1500);
    const out = await waitReady(dir, 'signer', sleeper.pid!, health.port, 30);
    expect(out, out.stderr).to.include({ code: 0 });
    expect(out.stderr).to.equal('');
  });

  it('says the service exited, with its log, when its process is gone', async () => {
    const gone = spawn('true');
    await new Promise((r) => gone.once('exit', r));
    const health = await startHealthServer(0, []);
    servers.push(health);
    const out = await waitReady(dir, 'signer', gone.pid!, health.port, 5);
    expect(out.code).to.equal(1);
    expect(out.stderr).to.include('FAILED: signer: exited during start-up: fix what its log says');
    expect(out.stderr).to.include('signer: the last thing it said');
  });
});
