import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  LocalKeyWrapper,
  StoredCredentials,
  UnusableCertificateError,
  openCafPrivateKey,
  resealAll,
} from '@dte/secrets';
import { signingSecret } from '@dte/webhooks';
import { expect } from 'chai';

import { uploadCaf } from './dtes-fixtures';
import {
  call,
  companyRut,
  newRut,
  p12Form,
  startTestApi,
  uploadCert,
  type TestApi,
} from './support/test-api';

/** A .p12 for `rut` made by the openssl CLI with the given extra `pkcs12 -export` options. */
function opensslP12(rut: string, extra: string[]): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'api-hostile-'));
  try {
    const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    run(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'k.pem',
        '-out',
        'c.pem',
        '-days',
        '30',
      ].concat(['-subj', `/CN=Firmante/serialNumber=${rut}`]),
    );
    run([
      'pkcs12',
      '-export',
      '-inkey',
      'k.pem',
      '-in',
      'c.pem',
      '-out',
      'o.p12',
      '-passout',
      'pass:pw',
      ...extra,
    ]);
    return readFileSync(path.join(dir, 'o.p12'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const oldKey = randomBytes(32);
const newKey = randomBytes(32);

describe('certificate hardening (real PostgreSQL, over HTTP)', function () {
  this.timeout(180_000);
  let t: TestApi;

  before(async () => {
    // the api seals under the "old" master key, as before a rotation
    t = await startTestApi({ keys: new LocalKeyWrapper({ old1: oldKey }, 'old1') });
  });
  after(async () => t?.close());

  it('refuses a .p12 with 2 000 000 iterations (openssl -iter 2000000, and -legacy) with 422 cert.invalid, while other requests are served', async () => {
    const s = await t.seed({ scopes: ['certificates:read', 'certificates:write'] });
    const rut = await companyRut(t, s.company_id);
    // made first: openssl itself spends seconds on 2 000 000 iterations, longer than the
    // server keeps an idle connection open
    const files = [
      ['-iter', '2000000'],
      ['-iter', '2000000', '-legacy'],
      ['-iter', '2000000', '-nomaciter'],
    ].map((extra) => opensslP12(rut, extra));
    for (const hostile of files) {
      const started = Date.now();
      const [res, list] = await Promise.all([
        call(t.url, 'POST', '/certificates', { key: s.api_key, form: p12Form(hostile, 'pw', 'hostil') }),
        call(t.url, 'GET', '/certificates', { key: s.api_key }),
      ]);
      const ms = Date.now() - started;
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('cert.invalid');
      expect(res.body.message).to.match(/2000000 (MAC|key-encryption) iterations; at most 20000/);
      expect(list.status).to.equal(200);
      expect(ms, 'refused in well under a second').to.be.lessThan(1000);
    }
    const rows = await t.db.dataSource.query('SELECT count(*)::int AS n FROM certificates');
    expect(rows[0].n).to.equal(0);
    // the same certificate exported with openssl's default 2048 iterations is accepted
    const ok = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(opensslP12(rut, []), 'pw', 'normal'),
    });
    expect(ok.status).to.equal(201);
  });

  it('rotates the master key: old rows open with the previous key, resealAll moves certificates, CAF keys and webhook secrets (also those in clear) to the new one', async () => {
    const rut = newRut();
    const s = await t.seed({
      rut,
      signerRuts: [rut],
      scopes: ['certificates:read', 'certificates:write', 'caf:write', 'webhook:read', 'webhook:write'],
    });
    const cert = await uploadCert(t, s.api_key, rut);
    const caf = await uploadCaf(t, s.api_key, rut, { razonSocial: 'EMPRESA', hasta: 10 });
    const hook = await call(t.url, 'POST', '/webhooks', {
      key: s.api_key,
      json: { url: 'https://93.184.216.34/h', events: ['dte.accepted'] },
      headers: { 'Idempotency-Key': `rot-${Date.now()}` },
    });
    expect(hook.status).to.equal(201);
    const clear = await call(t.url, 'POST', '/webhooks', {
      key: s.api_key,
      json: { url: 'https://93.184.216.34/old', events: ['dte.accepted'] },
      headers: { 'Idempotency-Key': `rot2-${Date.now()}` },
    });
    // a subscription made before secrets were sealed keeps its secret in clear
    await t.db.dataSource.query(
      `UPDATE webhook_subscriptions SET secret = 'whsec-en-claro', secret_sealed = NULL WHERE id = $1`,
      [clear.body.id],
    );
    const ds = t.db.dataSource;
    const rotating = new LocalKeyWrapper({ old1: oldKey, new1: newKey }, 'new1');
    const newOnly = new LocalKeyWrapper({ new1: newKey }, 'new1');
    // before re-sealing, the new key alone cannot open the old rows; with the previous key it can
    const before = await new StoredCredentials({ db: ds, keys: newOnly, now: Date.now })
      .get(cert.id)
      .catch((e) => e);
    expect((before as Error).message).to.match(/master key old1 is not available/);
    expect(
      (await new StoredCredentials({ db: ds, keys: rotating, now: Date.now }).get(cert.id)).info.rut,
    ).to.equal(rut);

    const report = await resealAll(ds, rotating, 'new1');
    expect(report.certificates).to.be.at.least(1);
    expect(report.cafs).to.be.at.least(1);
    expect(report.webhookSecrets).to.be.at.least(1);
    expect(report.webhookSecretsInClear).to.equal(1);
    expect(report.failed).to.deep.equal([]);
    const kids = await ds.query(
      `SELECT p12_sealed->>'kid' AS a, password_sealed->>'kid' AS b FROM certificates WHERE id = $1`,
      [cert.id],
    );
    expect(kids[0]).to.deep.equal({ a: 'new1', b: 'new1' });
    const cafKid = await ds.query(`SELECT rsa_private_key_sealed->>'kid' AS k, id FROM cafs WHERE id = $1`, [
      caf.id,
    ]);
    expect(cafKid[0].k).to.equal('new1');
    expect(
      await openCafPrivateKey(
        newOnly,
        cafKid[0].id,
        (await ds.query('SELECT rsa_private_key_sealed FROM cafs WHERE id = $1', [caf.id]))[0]
          .rsa_private_key_sealed,
      ),
    ).to.contain('PRIVATE KEY');
    // the new key alone opens everything now; the secret in clear is gone
    expect(
      (await new StoredCredentials({ db: ds, keys: newOnly, now: Date.now }).get(cert.id)).info.rut,
    ).to.equal(rut);
    const subs = await ds.query(
      'SELECT * FROM webhook_subscriptions WHERE id = ANY($1) ORDER BY created_at',
      [[hook.body.id, clear.body.id]],
    );
    const byId = new Map<string, Record<string, unknown>>(
      subs.map((r: Record<string, unknown>) => [r.id as string, r]),
    );
    expect(await signingSecret(newOnly, byId.get(hook.body.id as string)!)).to.equal(hook.body.secret);
    expect(await signingSecret(newOnly, byId.get(clear.body.id as string)!)).to.equal('whsec-en-claro');
    expect(byId.get(clear.body.id as string)!.secret).to.equal(null);
    // a second run finds nothing left
    expect(await resealAll(ds, rotating, 'new1')).to.deep.equal({
      certificates: 0,
      cafs: 0,
      webhookSecrets: 0,
      webhookSecretsInClear: 0,
      failed: [],
    });
  });

  it('workers never use a deleted certificate, even one already in memory, and evict expired entries', async () => {
    const rut = newRut();
    const s = await t.seed({ rut, signerRuts: [rut], scopes: ['certificates:read', 'certificates:write'] });
    const a = await uploadCert(t, s.api_key, rut, 'a');
    let now = Date.now();
    const keys = new LocalKeyWrapper({ old1: oldKey, new1: newKey }, 'new1');
    const store = new StoredCredentials({ db: t.db.dataSource, keys, now: () => now, ttlMs: 60_000 });
    expect((await store.get(a.id)).info.rut).to.equal(rut);
    expect(store.size).to.equal(1);
    // a second certificate, so that the first may be deleted through the api
    const otherP12 = opensslP12(rut, []);
    const b = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(otherP12, 'pw', 'b'),
    });
    expect(b.status).to.equal(201);
    await call(t.url, 'POST', `/certificates/${b.body.id}/activate`, { key: s.api_key });
    const del = await call(t.url, 'DELETE', `/certificates/${a.id}`, { key: s.api_key });
    expect(del.status, JSON.stringify(del.body)).to.be.oneOf([200, 204]);
    const err = await store.get(a.id).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnusableCertificateError);
    expect((err as Error).message).to.match(/was deleted/);
    expect(store.size).to.equal(0);
    // an entry past its TTL is evicted by the next open, not kept forever
    await store.get(b.body.id as string);
    now += 61_000;
    store.evictExpired();
    expect(store.size).to.equal(0);
  });
});
