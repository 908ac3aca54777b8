// `scripts/stack.sh up` run again while the stack runs is harmless: it reuses every part (same
// processes, same endpoints) and says so.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, testStack } from '../support/env';

const run = promisify(execFile);
const script = path.join(repoRoot, 'scripts/stack.sh');

async function status(): Promise<string> {
  return (await run('bash', [script, 'status'], { cwd: repoRoot })).stdout;
}

describe('foundation: the local stack script', function () {
  this.timeout(180000);

  before(async function () {
    const s = await testStack();
    if (s.kind !== 'local') this.skip();
  });

  it('reuses what runs when `up` is run twice in a row', async () => {
    const first = await run('bash', [script, 'up'], { cwd: repoRoot });
    const before = await status();
    const second = await run('bash', [script, 'up'], { cwd: repoRoot });
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
