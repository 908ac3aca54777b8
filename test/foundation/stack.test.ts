// `scripts/stack.sh up` run again while the stack runs is harmless: it reuses every part (same
// processes, same endpoints) and says so.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
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
