import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Router from '@koa/router';
import { LocalKeyWrapper } from '@dte/secrets';
import { resolveSigningCertificate } from '@dte/certificates';
import { principalOf } from '../src/routes/route-kit';
import {
  call,
  companyRut,
  newRut,
  p12Form,
  startTestApi,
  testP12,
  uploadCert,
  type TestApi,
} from './support/test-api';

const DAY = 86_400_000;

describe('certificates over HTTP', function () {
  this.timeout(180_000);
  let t: TestApi;

  before(async () => {
    t = await startTestApi({
      deps: {
        // a signing verb shaped like POST /dtes, to exercise the X-Cert-Id rules over HTTP
        mountExtraRoutes: (router: Router, kit) => {
          router.post('/probe/sign', ...kit.chain({ auth: 'bearer', scope: 'dte:write' }), async (ctx) => {
            const cert = await resolveSigningCertificate(
              t.deps.dataSource,
              principalOf(ctx).organizationId,
              ctx.get('X-Cert-Id') || undefined,
              { path: 'dte', now: kit.now() },
            );
            ctx.body = { certificate_id: cert.id };
          });
        },
      },
    });
  });
  after(async () => t?.close());

  it('stores a .p12 (201) with RUT, validity and fingerprint; the list never shows the secret', async () => {
    const s = await t.seed();
    const rut = await companyRut(t, s.company_id);
    const p12 = testP12(rut, 'clave-1');
    const res = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(p12, 'clave-1', 'firma principal'),
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ rut, label: 'firma principal', is_default: true, expired: false });
    // independent oracle: openssl reads the same .p12 and computes the fingerprint
    const dir = mkdtempSync(path.join(tmpdir(), 'p12-'));
    try {
      writeFileSync(path.join(dir, 'c.p12'), p12);
      const pem = execFileSync(
        'openssl',
        ['pkcs12', '-in', path.join(dir, 'c.p12'), '-nokeys', '-passin', 'pass:clave-1', '-legacy'],
        {
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      ).toString();
      writeFileSync(path.join(dir, 'c.pem'), pem);
      const fp = execFileSync('openssl', [
        'x509',
        '-in',
        path.join(dir, 'c.pem'),
        '-noout',
        '-fingerprint',
        '-sha256',
      ])
        .toString()
        .split('=')[1]
        .trim()
        .replace(/:/g, '')
        .toLowerCase();
      expect(res.body.fingerprint_sha256).to.equal(fp);
      const end = execFileSync('openssl', [
        'x509',
        '-in',
        path.join(dir, 'c.pem'),
        '-noout',
        '-enddate',
      ]).toString();
      expect(new Date(res.body.not_after as string).getTime()).to.equal(
        new Date(end.split('=')[1].trim()).getTime(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const list = await call(t.url, 'GET', '/certificates', { key: s.api_key });
    expect(list.status).to.equal(200);
    expect((list.body.data as unknown[]).length).to.equal(1);
    expect(list.text).to.not.match(/clave-1|sealed|p12|password/i);
  });

  it('keeps the .p12 and its password encrypted at rest (envelope encryption)', async () => {
    const s = await t.seed();
    const rut = await companyRut(t, s.company_id);
    const cert = await uploadCert(t, s.api_key, rut, 'x', 'pw-at-rest-123');
    const row = (
      await t.db.dataSource.query('SELECT p12_sealed, password_sealed FROM certificates WHERE id = $1', [
        cert.id,
      ])
    )[0];
    const dump = JSON.stringify(row);
    expect(dump).to.not.contain('pw-at-rest-123');
    expect(dump).to.not.contain(testP12(rut, 'pw-at-rest-123').toString('base64').slice(0, 40));
    expect(row.p12_sealed).to.include({ v: 1, alg: 'A256GCM', kid: t.config.masterKeyId });
    // the wrapped data key differs per secret
    expect(row.p12_sealed.wk).to.not.equal(row.password_sealed.wk);
  });

  it('answers cert.invalid_request when file, password or label is missing', async () => {
    const s = await t.seed();
    const p12 = testP12(await companyRut(t, s.company_id));
    for (const [form, missing] of [
      [p12Form(null, 'secreto', 'l'), ['file']],
      [p12Form(p12, null, 'l'), ['password']],
      [p12Form(p12, 'secreto', '  '), ['label']],
    ] as const) {
      const res = await call(t.url, 'POST', '/certificates', { key: s.api_key, form });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('cert.invalid_request');
      expect(res.body.detail).to.deep.equal({ missing });
    }
    const notMultipart = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      json: { password: 'x' },
    });
    expect(notMultipart.body.code).to.equal('cert.invalid_request');
  });

  it('answers cert.invalid_request, not 500, for a label with a NUL character, and stores nothing', async () => {
    // found by schemathesis: PostgreSQL refuses U+0000 in text, so the INSERT failed with 500
    const s = await t.seed();
    const p12 = testP12(await companyRut(t, s.company_id));
    const res = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(p12, 'secreto', 'z\u0000Ù'),
    });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.code).to.equal('cert.invalid_request');
    const [n] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM certificates WHERE organization_id = $1`,
      [s.organization_id],
    );
    expect(n.n).to.equal(0);
  });

  it('answers cert.invalid for a wrong password or a file that is not a .p12', async () => {
    const s = await t.seed();
    const p12 = testP12(await companyRut(t, s.company_id));
    let res = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(p12, 'wrong', 'l'),
    });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('cert.invalid');
    res = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(Buffer.from('not a p12'), 'x', 'l'),
    });
    expect(res.body.code).to.equal('cert.invalid');
  });

  it('answers cert.duplicate for a fingerprint already loaded', async () => {
    const s = await t.seed();
    const rut = await companyRut(t, s.company_id);
    await uploadCert(t, s.api_key, rut);
    const res = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(testP12(rut), 'secreto', 'again'),
    });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('cert.duplicate');
  });

  it('answers cert_subject_mismatch for a certificate of someone who may not sign for the emitter', async () => {
    const stranger = newRut();
    const s = await t.seed();
    const res = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(testP12(stranger), 'secreto', 'l'),
    });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('cert_subject_mismatch');
    // a declared signer (a person's certificate) is accepted
    const withSigner = await t.seed({ signerRuts: [stranger] });
    const ok = await call(t.url, 'POST', '/certificates', {
      key: withSigner.api_key,
      form: p12Form(testP12(stranger), 'secreto', 'l'),
    });
    expect(ok.status).to.equal(201);
  });

  it('answers cert_expired for an expired certificate', async () => {
    const s = await t.seed();
    const rut = await companyRut(t, s.company_id);
    const p12 = testP12(rut, 'secreto', new Date(Date.now() + DAY));
    t.advanceClock(2 * DAY);
    try {
      const res = await call(t.url, 'POST', '/certificates', {
        key: s.api_key,
        form: p12Form(p12, 'secreto', 'l'),
      });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('cert_expired');
      expect(res.body.detail).to.have.property('expiredAt');
    } finally {
      t.advanceClock(-2 * DAY);
    }
  });

  it('activates a certificate (cert.expired cannot be default) and soft-deletes (cert.last_remaining)', async () => {
    const s = await t.seed({ signerRuts: [] });
    const rut = await companyRut(t, s.company_id);
    const first = await uploadCert(t, s.api_key, rut, 'first');
    const shortLived = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(testP12(rut, 'secreto', new Date(Date.now() + DAY)), 'secreto', 'short'),
    });
    expect(shortLived.status).to.equal(201);
    expect(shortLived.body.is_default).to.equal(false);
    const second = shortLived.body.id as string;

    let res = await call(t.url, 'POST', `/certificates/${second}/activate`, { key: s.api_key });
    expect(res.status).to.equal(200);
    expect(res.body.is_default).to.equal(true);
    let list = await call(t.url, 'GET', '/certificates', { key: s.api_key });
    expect(
      (list.body.data as { id: string; is_default: boolean }[]).filter((c) => c.is_default).map((c) => c.id),
    ).to.deep.equal([second]);

    t.advanceClock(2 * DAY);
    try {
      res = await call(t.url, 'POST', `/certificates/${second}/activate`, { key: s.api_key });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('cert.expired');
    } finally {
      t.advanceClock(-2 * DAY);
    }

    res = await call(t.url, 'DELETE', `/certificates/${second}`, { key: s.api_key });
    expect(res.status).to.equal(200);
    list = await call(t.url, 'GET', '/certificates', { key: s.api_key });
    expect((list.body.data as { id: string }[]).map((c) => c.id)).to.deep.equal([first.id]);
    res = await call(t.url, 'DELETE', `/certificates/${first.id}`, { key: s.api_key });
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ code: 'cert.last_remaining', next_action: 'upload_certificate' });
    res = await call(t.url, 'DELETE', `/certificates/${second}`, { key: s.api_key });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('cert.not_found');
    res = await call(t.url, 'POST', '/certificates/not-a-uuid/activate', { key: s.api_key });
    expect(res.body.code).to.equal('cert.not_found');
  });

  it('applies the X-Cert-Id rules: cert_id_missing, cert_id_ambiguous, the only one, the one named', async () => {
    const s = await t.seed();
    const rut = await companyRut(t, s.company_id);
    let res = await call(t.url, 'POST', '/probe/sign', { key: s.api_key });
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'cert_id_missing', next_action: 'send_cert_id_header' });
    const a = await uploadCert(t, s.api_key, rut, 'a');
    res = await call(t.url, 'POST', '/probe/sign', { key: s.api_key });
    expect(res.body).to.deep.equal({ certificate_id: a.id });
    const b = await call(t.url, 'POST', '/certificates', {
      key: s.api_key,
      form: p12Form(testP12(rut, 'otra'), 'otra', 'b'),
    });
    res = await call(t.url, 'POST', '/probe/sign', { key: s.api_key });
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'cert_id_ambiguous', next_action: 'send_cert_id_header' });
    res = await call(t.url, 'POST', '/probe/sign', {
      key: s.api_key,
      headers: { 'X-Cert-Id': b.body.id as string },
    });
    expect(res.body).to.deep.equal({ certificate_id: b.body.id });
    const other = await t.seed();
    res = await call(t.url, 'POST', '/probe/sign', { key: other.api_key, headers: { 'X-Cert-Id': a.id } });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('cert_not_found');
  });

  describe('when the master key is not available', () => {
    let noKms: TestApi;
    before(async () => {
      noKms = await startTestApi({ keys: new LocalKeyWrapper({}, null) });
    });
    after(async () => noKms?.close());

    it('answers 503 cert.kms_unavailable and stores nothing', async () => {
      const s = await noKms.seed();
      const rut = await companyRut(noKms, s.company_id);
      const res = await call(noKms.url, 'POST', '/certificates', {
        key: s.api_key,
        form: p12Form(testP12(rut), 'secreto', 'l'),
      });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('cert.kms_unavailable');
      expect(await noKms.db.dataSource.query('SELECT id FROM certificates')).to.deep.equal([]);
    });
  });
});
