import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDataSource, runMigrations } from '@dte/database';
import { freshSchema, testStack } from '../../../test/support/env';
import {
  DASHBOARD_ORIGIN,
  call,
  newRut,
  p12Form,
  startTestApi,
  testP12,
  type TestApi,
} from './support/test-api';

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
    const first = JSON.parse(
      (await run('--owner-email', 'owner@demo.cl', '--owner-password', 'demo-password-1')).stdout.trim(),
    );
    expect(first.api_key).to.match(/^sk_cert_/);
    expect(first.environment).to.equal('cert');
    expect(first.user_id).to.be.a('string');
    expect(first).to.not.have.property('session_cookie');
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
      // the seeded owner signs in to the dashboard with the password given to the seed
      const login = await call(t.url, 'POST', '/auth/login', {
        json: { email: 'owner@demo.cl', password: 'demo-password-1' },
        headers: { Origin: DASHBOARD_ORIGIN },
      });
      expect(login.status, login.text).to.equal(200);
      expect(login.body.organizacion_actual).to.equal(first.organization_id);
    } finally {
      await t.close();
    }
  });

  describe('reusing a company', () => {
    let t: TestApi;
    before(async () => {
      t = await startTestApi();
    });
    after(async () => t?.close());

    const signerRuts = async (companyId: string): Promise<string[]> =>
      (await t.db.dataSource.query('SELECT signer_ruts FROM companies WHERE id = $1', [companyId]))[0]
        .signer_ruts;
    const uploadP12 = (key: string, rut: string) =>
      call(t.url, 'POST', '/certificates', { key, form: p12Form(testP12(rut), 'secreto', 'l') });

    it('seeds the same company twice without signer RUTs: one company, an empty signer list, both keys work', async () => {
      const org = `org-${newRut()}`;
      const rut = newRut();
      const first = await t.seed({ org, rut });
      const second = await t.seed({ org, rut });
      expect(second.company_id).to.equal(first.company_id);
      expect(second.api_key).to.not.equal(first.api_key);
      expect(await signerRuts(first.company_id)).to.deep.equal([]);
      for (const key of [first.api_key, second.api_key]) {
        expect((await call(t.url, 'GET', '/caf', { key })).status).to.equal(200);
      }
    });

    it('a second seed without signer RUTs keeps the signers of the first (their certificates still upload)', async () => {
      const org = `org-${newRut()}`;
      const rut = newRut();
      const signer = newRut();
      const first = await t.seed({ org, rut, signerRuts: [signer] });
      const second = await t.seed({ org, rut });
      expect(second.company_id).to.equal(first.company_id);
      expect(await signerRuts(first.company_id)).to.deep.equal([signer]);
      expect((await uploadP12(second.api_key, signer)).status).to.equal(201);
      // someone never declared is still refused
      const stranger = await uploadP12(second.api_key, newRut());
      expect(stranger.status).to.equal(422);
      expect(stranger.body.code).to.equal('cert_subject_mismatch');
      // a third seed adds a signer without dropping the first, each RUT once
      const another = newRut();
      await t.seed({ org, rut, signerRuts: [another, signer] });
      expect(await signerRuts(first.company_id))
        .to.have.members([signer, another])
        .and.to.have.length(2);
    });
  });
});
