import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDataSource, runMigrations } from '@dte/database';
import { freshSchema, testStack } from '../../../test/support/env';
import { verifySession } from '../src/auth/session';
import { call, newRut, startTestApi } from './support/test-api';

const execFileP = promisify(execFile);
const apiDir = path.resolve(__dirname, '..');

describe('seed command', function () {
  this.timeout(120_000);

  it('creates an organization, a company and an API key that works, and reuses them on a second run', async () => {
    const stack = await testStack();
    const schema = await freshSchema('seed');
    const env = {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      DATABASE_SCHEMA: schema.name,
      SESSION_SECRET: 'x'.repeat(40),
    };
    const rut = newRut();
    const run = (...args: string[]) =>
      execFileP('npx', ['tsx', 'src/seed.ts', '--org', 'Demo SpA', '--rut', rut, '--env', 'cert', ...args], {
        cwd: apiDir,
        env,
      });
    const first = JSON.parse((await run('--owner-email', 'owner@demo.cl')).stdout.trim());
    expect(first.api_key).to.match(/^sk_cert_/);
    expect(first.environment).to.equal('cert');
    expect(verifySession(first.session_cookie, 'x'.repeat(40), new Date())).to.include({
      uid: first.user_id,
      org: first.organization_id,
    });
    const second = (await run('--print', 'key')).stdout.trim();
    expect(second).to.match(/^sk_cert_[A-Za-z0-9_-]{43}$/);
    expect(second).to.not.equal(first.api_key);

    const ds = createDataSource({ url: stack.databaseUrl, schema: schema.name, poolSize: 2 });
    await runMigrations(ds);
    const t = await startTestApi({
      db: {
        dataSource: ds,
        schema: schema.name,
        applied: [],
        cleanup: async () => {
          await ds.destroy();
          await schema.drop();
        },
      },
    });
    try {
      const orgs = await ds.query(
        'SELECT o.id, c.rut FROM organizations o JOIN companies c ON c.organization_id = o.id',
      );
      expect(orgs).to.deep.equal([{ id: first.organization_id, rut }]);
      for (const key of [first.api_key, second]) {
        const res = await call(t.url, 'GET', '/caf', { key });
        expect(res.status).to.equal(200);
      }
    } finally {
      await t.close();
    }
  });
});
