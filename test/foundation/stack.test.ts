// `scripts/stack.sh up` run again while the stack runs is harmless: it reuses every part (same
// processes, same endpoints) and says so.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, testStack } from '../support/env';

const execFileP = promisify(execFile);
const script = path.join(repoRoot, 'scripts/stack.sh');

/**
 * The script's environment without the endpoints scripts/test.sh exported from the local stack
 * (so `up` takes its real reuse path), keeping those the user gave (DTE_STACK_GIVEN).
 */
function scriptEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  const given = (process.env.DTE_STACK_GIVEN ?? '').split(' ').filter(Boolean);
  for (const k of ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'DATABASE_URL', 'REDIS_URL'])
    if (!given.includes(k)) delete env[k];
  return env;
}

const run = (cmd: string, args: string[]) => execFileP(cmd, args, { cwd: repoRoot, env: scriptEnv() });

async function status(): Promise<string> {
  return (await run('bash', [script, 'status'])).stdout;
}

describe('foundation: the local stack script', function () {
  this.timeout(180000);

  before(async function () {
    const s = await testStack();
    if (s.kind !== 'local') this.skip();
  });

  it('reuses what runs when `up` is run twice in a row', async () => {
    const first = await run('bash', [script, 'up']);
    const before = await status();
    const second = await run('bash', [script, 'up']);
    const after = await status();
    expect(after).to.equal(before);
    for (const part of ['postgres', 'redis', 'kafka', 'registry']) {
      expect(second.stdout, part).to.match(new RegExp(`${part}: .*(reused|is set; using it)`));
      expect(second.stdout, part).not.to.match(new RegExp(`${part}: starting`));
    }
    const envOf = (out: string) => out.split('\n').filter((l) => /^\[stack\] {3}[A-Z_]+=/.test(l));
    expect(envOf(second.stdout)).to.deep.equal(envOf(first.stdout));
    expect(envOf(second.stdout)).to.have.length(4);
  });

  it('reports each part with its address in `status`', async () => {
    const out = await status();
    for (const part of ['postgres', 'redis', 'kafka', 'registry']) {
      expect(out, part).to.match(new RegExp(`^${part}\\s+(running|external|foreign)\\s+\\S+`, 'm'));
    }
  });
});

/** Sends PING over a plain socket; resolves with the first reply line (an independent check). */
function redisPing(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.once('data', (d) => {
      resolve(d.toString().trim());
      s.destroy();
    });
    s.once('error', reject);
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Whether the process exists and is not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

describe('foundation: the stack script on a sandbox stack (own state dir and ports)', function () {
  this.timeout(60000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let port: number;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-stack-'));
    port = await freePort();
    // Only Redis is local here (it starts in milliseconds); the other parts are "given".
    env = {
      ...process.env,
      DTE_STACK_DIR: dir,
      DTE_STACK_PORT_OFFSET: String(port - 16379),
      DATABASE_URL: 'postgres://given:given@127.0.0.1:1/given',
      KAFKA_BROKERS: '127.0.0.1:1',
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1',
    };
    delete env.REDIS_URL;
  });
  afterEach(async () => {
    await execFileP('bash', [script, 'down'], { cwd: repoRoot, env }).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts a part, reuses it on the second up, and down stops it leaving nothing', async () => {
    const first = await execFileP('bash', [script, 'up'], { cwd: repoRoot, env });
    expect(first.stdout).to.match(new RegExp(`redis: starting on 127\\.0\\.0\\.1:${port}`));
    expect(first.stdout).to.match(/postgres: DATABASE_URL is set; using it/);
    expect(await redisPing(port)).to.equal('+PONG');
    const pid = Number(fs.readFileSync(path.join(dir, 'run/redis.pid'), 'utf8'));
    expect(isRunning(pid)).to.equal(true);

    const second = await execFileP('bash', [script, 'up'], { cwd: repoRoot, env });
    expect(second.stdout).to.include(`redis: already running (pid ${pid})`);
    expect(Number(fs.readFileSync(path.join(dir, 'run/redis.pid'), 'utf8'))).to.equal(pid);

    const down = await execFileP('bash', [script, 'down'], { cwd: repoRoot, env });
    expect(down.stdout).to.include(`redis stopped (pid ${pid})`);
    expect(isRunning(pid)).to.equal(false);
    expect(await portOpen(port)).to.equal(false);
    const status = await execFileP('bash', [script, 'status'], { cwd: repoRoot, env });
    expect(status.stdout).to.match(/^redis\s+stopped/m);
  });

  it('fails naming the part and the reason when its port is taken by something else', async () => {
    const sockets = new Set<net.Socket>();
    const squatter = net.createServer((s) => {
      sockets.add(s);
      s.on('error', () => undefined);
      s.end('HTTP/1.1 400 nope\r\n\r\n');
    });
    await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', r));
    try {
      let failure: { code?: number; stderr?: string } | undefined;
      await execFileP('bash', [script, 'up'], { cwd: repoRoot, env }).catch((e) => (failure = e));
      expect(failure, 'up must fail').to.not.equal(undefined);
      expect(failure!.code).to.not.equal(0);
      expect(failure!.stderr).to.include(
        `FAILED: redis: port ${port} is taken by something that does not answer PING`,
      );
      expect(fs.existsSync(path.join(dir, 'run/redis.pid'))).to.equal(false);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => squatter.close(r));
    }
  });
});
