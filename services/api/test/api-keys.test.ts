import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApiKey, listApiKeys, revokeApiKey } from '../src/api-keys';
import { testStack } from '../../../test/support/env';
import { call, startTestApi, type TestApi } from './support/test-api';

const execFileP = promisify(execFile);

describe('API key management', function () {
  this.timeout(60_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it('creates keys with scopes and expiry, lists them without secrets, revokes by prefix or id', async () => {
    const s = await t.seed();
    const readOnly = await createApiKey(t.db.dataSource, {
      companyId: s.company_id,
      environment: 'cert',
      name: 'ro',
      scopes: ['dte:read'],
    });
    expect((await call(t.url, 'GET', '/caf', { key: readOnly.key })).status).to.equal(200);
    expect((await call(t.url, 'GET', '/certificates', { key: readOnly.key })).body.code).to.equal(
      'forbidden',
    );

    const listed = await listApiKeys(t.db.dataSource, s.organization_id);
    expect(listed.map((k) => k.name)).to.include('ro');
    expect(JSON.stringify(listed)).to.not.contain(readOnly.key);

    expect(await revokeApiKey(t.db.dataSource, readOnly.prefix)).to.equal(1);
    expect(await revokeApiKey(t.db.dataSource, readOnly.prefix)).to.equal(0);
    expect((await call(t.url, 'GET', '/caf', { key: readOnly.key })).body.code).to.equal('api_key_revoked');

    // the CLI revokes by id
    const cli = await execFileP('npx', ['tsx', 'src/api-keys-cli.ts', 'revoke', s.api_key_id], {
      cwd: path.resolve(__dirname, '..'),
      env: { ...process.env, DATABASE_URL: (await testStack()).databaseUrl, DATABASE_SCHEMA: t.db.schema },
    });
    expect(JSON.parse(cli.stdout)).to.deep.equal({ revoked: 1 });
    expect((await call(t.url, 'GET', '/caf', { key: s.api_key })).body.code).to.equal('api_key_revoked');
  });
});
