import { createTestCaf, createTestSiiKey, santiagoDate } from '@dte/engine';
import { expect } from 'chai';

import { body, emit, orgWithCafs, otherCompanyOf, uploadCaf } from './dtes-fixtures';
import {
  cafForm,
  call,
  newRut,
  p12Form,
  startTestApi,
  testP12,
  uploadCert,
  type TestApi,
} from './support/test-api';

describe('company scope and forged CAFs (real PostgreSQL, over HTTP)', function () {
  this.timeout(180_000);
  let t: TestApi;

  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it('two companies of one organization sending the same Idempotency-Key get two documents', async () => {
    const a = await orgWithCafs(t);
    const b = await otherCompanyOf(t, a, {
      giro: 'Venta de ferretería',
      direccion: 'Av. Providencia 1234',
      comuna: 'Providencia',
      actividadEconomica: 467300,
    });
    expect(b.orgId).to.equal(a.orgId);
    expect(b.companyId).to.not.equal(a.companyId);
    const rutB = b.rut;
    await uploadCaf(t, b.key, rutB, { razonSocial: 'OTRA EMPRESA', hasta: 10 });

    const idem = `pedido-${Date.now()}`;
    const first = await emit(t, a, body(33, a.rut, 10000), { idem });
    expect(first.status, first.text).to.equal(202);
    const second = await emit(t, b, body(33, rutB, 20000), { idem });
    expect(second.status, second.text).to.equal(202);
    expect(second.body.id).to.not.equal(first.body.id);
    expect(second.body).to.include({ rut_emisor: rutB, monto_neto: 20000 });
    // each company's retry still answers its own document
    const againA = await emit(t, a, body(33, a.rut, 10000), { idem });
    expect(againA.status).to.be.oneOf([200, 202]);
    expect(againA.body.id).to.equal(first.body.id);
    const againB = await emit(t, b, body(33, rutB, 20000), { idem });
    expect(againB.body.id).to.equal(second.body.id);
    const rows = await t.db.dataSource.query(
      'SELECT company_id FROM dtes WHERE organization_id = $1 AND idempotency_key = $2 ORDER BY created_at',
      [a.orgId, idem],
    );
    expect(rows.map((r: { company_id: string }) => r.company_id)).to.deep.equal([a.companyId, b.companyId]);
  });

  it('refuses a forged CAF (FRMA by another key, or a DA altered after signing) and registers no folio', async () => {
    const rut = newRut();
    const s = await t.seed({ rut, signerRuts: [rut] });
    await uploadCert(t, s.api_key, rut);
    const opts = {
      rutEmisor: rut,
      razonSocial: 'EMPRESA',
      tipoDte: 33,
      desde: 1,
      hasta: 100,
      fechaAutorizacion: santiagoDate(new Date()),
      keyBits: 512,
    };
    // signed by a key that claims IDK 100 but is not the SII's
    const forged = createTestCaf({ ...opts, siiKey: createTestSiiKey(100) });
    let res = await call(t.url, 'POST', '/caf', { key: s.api_key, form: cafForm(forged) });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('caf.parse_error');
    expect(res.body.message).to.match(/FRMA\) does not verify with the SII key of IDK 100/);
    // a genuine CAF whose range was widened after the SII signed it
    const genuine = createTestCaf({ ...opts, siiKey: t.sim.siiKeys.cert! });
    const widened = genuine.replace('<H>100</H>', '<H>100000</H>');
    expect(widened).to.not.equal(genuine);
    res = await call(t.url, 'POST', '/caf', { key: s.api_key, form: cafForm(widened) });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('caf.parse_error');
    const n = await t.db.dataSource.query('SELECT count(*)::int AS n FROM cafs WHERE company_id = $1', [
      s.company_id,
    ]);
    expect(n[0].n).to.equal(0);
    // the genuine one is accepted
    res = await call(t.url, 'POST', '/caf', { key: s.api_key, form: cafForm(genuine) });
    expect(res.status, res.text).to.equal(201);
  });

  it("a company-scoped key sees, activates, deletes and signs with only its company's certificates", async () => {
    const rutA = newRut();
    const orgName = `scope-${Date.now()}`;
    const scopes = ['certificates:read', 'certificates:write'] as const;
    const a = await t.seed({ org: orgName, rut: rutA, signerRuts: [rutA], scopes: [...scopes] });
    const rutB = newRut();
    const b = await t.seed({ org: orgName, rut: rutB, signerRuts: [rutB], scopes: [...scopes] });
    expect(b.organization_id).to.equal(a.organization_id);
    const certA = await uploadCert(t, a.api_key, rutA, 'a');
    const certB = await uploadCert(t, b.api_key, rutB, 'b');
    const ids = async (key: string) =>
      ((await call(t.url, 'GET', '/certificates', { key })).body.data as { id: string }[]).map((c) => c.id);
    expect(await ids(a.api_key)).to.deep.equal([certA.id]);
    expect(await ids(b.api_key)).to.deep.equal([certB.id]);
    // another company's certificate answers like a missing one
    const act = await call(t.url, 'POST', `/certificates/${certB.id}/activate`, { key: a.api_key });
    expect(act.status).to.equal(404);
    expect(act.body.code).to.equal('cert.not_found');
    const del = await call(t.url, 'DELETE', `/certificates/${certB.id}`, { key: a.api_key });
    expect(del.body.code).to.equal('cert.not_found');
    // a company key may not upload the certificate of another company's signer
    const up = await call(t.url, 'POST', '/certificates', {
      key: a.api_key,
      form: p12Form(testP12(rutB, 'otra'), 'otra', 'x'),
    });
    expect(up.body.code).to.equal('cert_subject_mismatch');
  });
});

describe('Prefer: wait is bounded per caller', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it("a caller's 5th concurrent Prefer: wait answers 202 at once without Preference-Applied; another caller still waits", async () => {
    const o = await orgWithCafs(t, { hasta: 50 });
    const other = await orgWithCafs(t, { hasta: 50 });
    // no pipeline runs here: a waiting request waits its full 3 s
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        (async () => {
          await new Promise((r) => setTimeout(r, i === 4 ? 300 : 0)); // the 5th comes last
          const res = await emit(t, o, body(33, o.rut, 1000 + i), { headers: { Prefer: 'wait=3' } });
          return { res, ms: Date.now() - started };
        })(),
      ),
    );
    const otherRes = await emit(t, other, body(33, other.rut, 5000), { headers: { Prefer: 'wait=1' } });
    for (const { res } of answers) expect(res.status, res.text).to.equal(202);
    const applied = answers.map(({ res }) => res.headers.get('preference-applied'));
    expect(applied.slice(0, 4)).to.deep.equal(['wait=3', 'wait=3', 'wait=3', 'wait=3']);
    expect(applied[4]).to.equal(null);
    expect(answers[4]!.ms, 'the 5th did not wait').to.be.lessThan(
      Math.min(...answers.slice(0, 4).map((a) => a.ms)),
    );
    expect(otherRes.headers.get('preference-applied')).to.equal('wait=1');
  });
});
