import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createTestCaf, type SiiKey } from '@dte/engine';
import { LocalKeyWrapper } from '@dte/secrets';
import {
  cafForm,
  call,
  enrolAtSii,
  newRut,
  startTestApi,
  uploadCert,
  withoutRequestId,
  type TestApi,
} from './support/test-api';
import { otherCompanyOf } from './dtes-fixtures';

const DAY = 86_400_000;
const today = () => new Date().toISOString().slice(0, 10);

interface Org {
  key: string;
  rut: string;
  orgId: string;
  companyId: string;
}

describe('CAF inventory over HTTP', function () {
  this.timeout(180_000);
  let t: TestApi;
  let prodKey: SiiKey;

  const caf = (
    rut: string,
    tipoDte: number,
    desde: number,
    hasta: number,
    opts: { siiKey?: SiiKey; fa?: string } = {},
  ) =>
    createTestCaf({
      siiKey: opts.siiKey ?? t.sim.siiKeys.cert,
      rutEmisor: rut,
      razonSocial: 'EMPRESA DE PRUEBA',
      tipoDte,
      desde,
      hasta,
      fechaAutorizacion: opts.fa ?? today(),
      keyBits: 512,
    });

  /** in production, enabled and certified for 33 */
  const org = async (env: 'cert' | 'prod' = 'cert', withCert = true): Promise<Org> => {
    const rut = newRut();
    const s = await t.seed({ rut, env, ...(env === 'prod' ? { prodTipos: [33] } : {}) });
    if (withCert) await uploadCert(t, s.api_key, rut);
    return { key: s.api_key, rut, orgId: s.organization_id, companyId: s.company_id };
  };

  const upload = (o: Org, xml: string | null, tipo?: string) =>
    call(t.url, 'POST', '/caf', { key: o.key, form: cafForm(xml, tipo) });

  before(async () => {
    t = await startTestApi();
    prodKey = t.sim.siiKeys.prod;
  });
  after(async () => t?.close());

  it('stores a CAF (201) and lists it with remaining folios and the low_folios alert', async () => {
    const o = await org();
    let res = await upload(o, caf(o.rut, 33, 1, 4));
    expect(res.status).to.equal(201);
    expect(res.body).to.include({
      tipo_dte: 33,
      sii_env: 'cert',
      rut_emisor: o.rut,
      desde: 1,
      hasta: 4,
      next_folio: 1,
      remaining: 4,
    });
    res = await upload(o, caf(o.rut, 34, 1, 100), '34');
    expect(res.status).to.equal(201);
    const inv = await call(t.url, 'GET', '/caf', { key: o.key });
    expect(inv.status).to.equal(200);
    expect((inv.body.data as unknown[]).length).to.equal(2);
    const summary = inv.body.summary as { tipo_dte: number; remaining: number; alerts: string[] }[];
    expect(summary.find((s) => s.tipo_dte === 33))
      .to.include({ remaining: 4 })
      .and.to.have.deep.property('alerts', ['low_folios']);
    expect(summary.find((s) => s.tipo_dte === 34))
      .to.include({ remaining: 100 })
      .and.to.have.deep.property('alerts', []);
    expect(inv.text).to.not.contain('RSASK');
    // the CAF private key is sealed at rest
    const row = (
      await t.db.dataSource.query(
        'SELECT rsa_private_key_sealed, caf_xml FROM cafs WHERE organization_id = $1 LIMIT 1',
        [o.orgId],
      )
    )[0];
    expect(JSON.stringify(row)).to.not.contain('PRIVATE KEY');
    expect(row.rsa_private_key_sealed).to.include({ v: 1, alg: 'A256GCM' });
  });

  it('answers caf.invalid_request without a file', async () => {
    const o = await org();
    const res = await upload(o, null, '33');
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('caf.invalid_request');
  });

  it('answers caf.parse_error for a file without RE/TD/D/H', async () => {
    const o = await org();
    const broken = caf(o.rut, 33, 1, 10).replace(/<TD>33<\/TD>/, '');
    for (const xml of ['<nada/>', 'not xml at all', broken]) {
      const res = await upload(o, xml);
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('caf.parse_error');
    }
  });

  it('answers caf.wrong_tipo when the CAF is not for tipo_esperado', async () => {
    const o = await org();
    const res = await upload(o, caf(o.rut, 33, 1, 10), '61');
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('caf.wrong_tipo');
  });

  it('answers caf_expired for a CAF older than its validity', async () => {
    const o = await org();
    const old = new Date(Date.now() - 200 * DAY).toISOString().slice(0, 10);
    const res = await upload(o, caf(o.rut, 33, 1, 10, { fa: old }));
    expect(res.status).to.equal(422);
    expect(res.body).to.include({ code: 'caf_expired', next_action: 'upload_caf' });
  });

  it('answers caf.no_certificate before any certificate is loaded', async () => {
    const o = await org('cert', false);
    const res = await upload(o, caf(o.rut, 33, 1, 10));
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('caf.no_certificate');
  });

  it('answers caf.duplicate for a folio range already registered (overlaps too)', async () => {
    const o = await org();
    expect((await upload(o, caf(o.rut, 33, 1, 10))).status).to.equal(201);
    for (const [d, h] of [
      [1, 10],
      [5, 20],
    ]) {
      const res = await upload(o, caf(o.rut, 33, d, h));
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('caf.duplicate');
    }
    expect((await upload(o, caf(o.rut, 33, 11, 20))).status).to.equal(201);
  });

  it('answers sii_env_mismatch for a CAF of the other environment', async () => {
    const o = await org('cert');
    let res = await upload(o, caf(o.rut, 33, 1, 10, { siiKey: prodKey }));
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('sii_env_mismatch');
    expect(res.body.detail).to.include({ caf: 'prod', credencial: 'cert' });
    const p = await org('prod');
    res = await upload(p, caf(p.rut, 33, 1, 10, { siiKey: prodKey }));
    expect(res.status).to.equal(201);
    expect(res.body.sii_env).to.equal('prod');
  });

  it("answers emisor_rut_mismatch for another emitter's CAF", async () => {
    const o = await org();
    const res = await upload(o, caf(newRut(), 33, 1, 10));
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('emisor_rut_mismatch');
  });

  describe('DELETE /caf/:id', () => {
    const insertDte = async (o: Org, cafId: string, folio: number, status: string) => {
      const cert = (
        await t.db.dataSource.query('SELECT id FROM certificates WHERE organization_id = $1 LIMIT 1', [
          o.orgId,
        ])
      )[0].id;
      const id = randomUUID();
      await t.db.dataSource.query(
        `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id, rut_emisor,
           razon_social_receptor, fecha_emision, input, document, sii_status, idempotency_key, body_hash)
         VALUES ($1, $2, $3, 'cert', 33, $4, $5, $6, $7, 'X', current_date, '{}', '{}', $8, $9, 'h')`,
        [id, o.orgId, o.companyId, folio, cafId, cert, o.rut, status, `k-${id}`],
      );
      return id;
    };

    it('deletes a CAF without accepted documents, then answers caf.not_found', async () => {
      const o = await org();
      const id = (await upload(o, caf(o.rut, 33, 1, 10))).body.id as string;
      await insertDte(o, id, 1, 'RCH');
      let res = await call(t.url, 'DELETE', `/caf/${id}`, { key: o.key });
      expect(res.status).to.equal(200);
      expect(res.body.id).to.equal(id);
      expect((await call(t.url, 'GET', '/caf', { key: o.key })).body.data).to.deep.equal([]);
      res = await call(t.url, 'DELETE', `/caf/${id}`, { key: o.key });
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('caf.not_found');
      // the deleted range stays registered: no folio can be handed out twice
      expect((await upload(o, caf(o.rut, 33, 1, 10))).body.code).to.equal('caf.duplicate');
    });

    it("answers another organization's CAF exactly like a missing one", async () => {
      const a = await org();
      const b = await org();
      const id = (await upload(a, caf(a.rut, 33, 1, 10))).body.id as string;
      const foreign = await call(t.url, 'DELETE', `/caf/${id}`, { key: b.key });
      const missing = await call(t.url, 'DELETE', `/caf/${id.replace(/.$/, id.endsWith('0') ? '1' : '0')}`, {
        key: b.key,
      });
      expect(foreign.status).to.equal(404);
      const strip = (x: Record<string, unknown>) => ({ ...withoutRequestId(x), detail: undefined });
      expect(strip(foreign.body)).to.deep.equal(strip(missing.body));
    });

    it('answers caf.has_accepted_dtes and caf.has_ceded_dtes', async () => {
      const o = await org();
      const accepted = (await upload(o, caf(o.rut, 33, 1, 10))).body.id as string;
      await insertDte(o, accepted, 1, 'EPR');
      let res = await call(t.url, 'DELETE', `/caf/${accepted}`, { key: o.key });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('caf.has_accepted_dtes');

      const ceded = (await upload(o, caf(o.rut, 33, 11, 20))).body.id as string;
      const dte = await insertDte(o, ceded, 11, 'RPR');
      await t.db.dataSource.query(`INSERT INTO dte_cessions (dte_id, ceded_at) VALUES ($1, now())`, [dte]);
      res = await call(t.url, 'DELETE', `/caf/${ceded}`, { key: o.key });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('caf.has_ceded_dtes');
    });
  });

  describe('PUT /caf/auto', () => {
    it('answers caf.auto_requires_production for a certification key', async () => {
      const o = await org('cert', false);
      const res = await call(t.url, 'PUT', '/caf/auto', {
        key: o.key,
        json: { tipo_dte: 33, enabled: true },
      });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('caf.auto_requires_production');
    });

    it('stores the setting for a production key', async () => {
      const o = await org('prod', false);
      const res = await call(t.url, 'PUT', '/caf/auto', {
        key: o.key,
        json: { tipo_dte: 33, enabled: true, threshold: 50, cantidad: 200 },
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({
        tipo_dte: 33,
        enabled: true,
        threshold: 50,
        cantidad: 200,
        sii_env: 'prod',
        rut_emisor: o.rut,
      });
      const again = await call(t.url, 'PUT', '/caf/auto', {
        key: o.key,
        json: { tipo_dte: 33, enabled: false },
      });
      expect(again.body).to.include({ enabled: false });
    });
  });

  describe('POST /caf/request (SII simulator in-process)', () => {
    const enrol = (rut: string, sender: string) => enrolAtSii(t, rut, { senders: [sender] });
    const ask = (o: Org, body: Record<string, unknown> = { tipo_dte: 33, cantidad: 20 }) =>
      call(t.url, 'POST', '/caf/request', { key: o.key, json: body });

    it("uses only its company's signers' certificates: another company's of the organization answers cert.not_found", async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      const other = await otherCompanyOf(t, o);
      const res = await call(t.url, 'POST', '/caf/request', {
        key: o.key,
        json: { tipo_dte: 33, cantidad: 5 },
        headers: { 'X-Cert-Id': other.certId },
      });
      expect(res.status, res.text).to.equal(404);
      expect(res.body.code).to.equal('cert.not_found');
      const stored = await t.db.dataSource.query('SELECT id FROM cafs WHERE company_id = $1', [o.companyId]);
      expect(stored).to.deep.equal([]);
    });

    it('asks the SII for folios and stores the granted CAF (201); a second ask is caf.request_in_flight', async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      const res = await ask(o);
      expect(res.status).to.equal(201);
      expect(res.body).to.include({
        tipo_dte: 33,
        desde: 1,
        hasta: 20,
        source: 'sii_request',
        sii_env: 'cert',
        remaining: 20,
      });
      const again = await ask(o);
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('caf.request_in_flight');
      // another type is not blocked
      expect((await ask(o, { tipo_dte: 61, cantidad: 5 })).status).to.equal(201);
    });

    it('answers cert.missing (412) without an active certificate', async () => {
      const o = await org('cert', false);
      const res = await ask(o);
      expect(res.status).to.equal(412);
      expect(res.body).to.include({ code: 'cert.missing', next_action: 'upload_certificate' });
    });

    it('answers caf.cert_not_authorized when the SII does not know the certificate holder', async () => {
      const o = await org();
      const res = await ask(o);
      expect(res.status).to.equal(502);
      expect(res.body.code).to.equal('caf.cert_not_authorized');
      // the lock was released: once enrolled, the same request goes through
      await enrol(o.rut, o.rut);
      expect((await ask(o)).status).to.equal(201);
    });

    it('answers caf.cert_not_authorized when the SII knows the holder but not for this company', async () => {
      const o = await org();
      // the certificate's holder is enrolled, but for another company only
      await enrol(newRut(), o.rut);
      const res = await ask(o);
      expect(res.status).to.equal(502);
      expect(res.body.code).to.equal('caf.cert_not_authorized');
      expect(res.body.detail).to.have.nested.property('sii.status', 403);
      await enrol(o.rut, o.rut);
      expect((await ask(o)).status).to.equal(201);
    });

    it('answers caf.grant_rejected when the SII refuses the grant', async () => {
      const p = await org();
      await enrol(p.rut, p.rut);
      t.sim.options.maxFoliosPerCaf = 5;
      try {
        const refused = await ask(p, { tipo_dte: 33, cantidad: 6 });
        expect(refused.status).to.equal(502);
        expect(refused.body.code).to.equal('caf.grant_rejected');
        expect(refused.body.detail).to.have.nested.property('sii.status', 422);
      } finally {
        t.sim.options.maxFoliosPerCaf = 10_000;
      }
    });

    it('answers caf.request_failed when the SII fails', async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      t.sim.state.triggers.add({ kind: 'http-error', operation: 'folios', status: 503 });
      const res = await ask(o);
      expect(res.status).to.equal(502);
      expect(res.body.code).to.equal('caf.request_failed');
    });

    it('keeps the request lock when the SII may have granted without answering (dropped connection)', async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      t.sim.state.triggers.add({ kind: 'drop', operation: 'folios' });
      const res = await ask(o);
      expect(res.status).to.equal(502);
      expect(res.body.code).to.equal('caf.request_failed');
      expect(res.body.detail).to.include({ outcome: 'unknown' });
      expect(res.body.hint).to.match(/may have granted/);
      // a blind retry is refused instead of possibly burning a second range
      expect((await ask(o)).body.code).to.equal('caf.request_in_flight');
    });

    it('releases the request lock when the SII answered with an error', async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      t.sim.state.triggers.add({ kind: 'http-error', operation: 'folios', status: 503 });
      const failed = await ask(o);
      expect(failed.body.code).to.equal('caf.request_failed');
      expect(failed.body.detail ?? {}).to.not.have.property('outcome');
      expect((await ask(o)).status).to.equal(201);
    });

    it('answers caf.persist_failed when the granted range cannot be stored', async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      // folios 1-5 were granted earlier and uploaded by hand; the SII's next grant starts at 1 for this simulator
      expect((await upload(o, caf(o.rut, 34, 1, 5))).status).to.equal(201);
      const res = await ask(o, { tipo_dte: 34, cantidad: 10 });
      expect(res.status).to.equal(502);
      expect(res.body.code).to.equal('caf.persist_failed');
      expect(res.body.detail).to.include({ tipoDte: 34, desde: 1, hasta: 10, reason: 'caf.duplicate' });
      expect(res.body.hint).to.match(/Do not request again/);
      // and the lock stays: asking again is refused instead of burning another range
      expect((await ask(o, { tipo_dte: 34, cantidad: 10 })).body.code).to.equal('caf.request_in_flight');
    });

    it('answers cert.kms.auth_failed when the stored certificate does not decrypt', async () => {
      const o = await org();
      await enrol(o.rut, o.rut);
      // flip the stored ciphertext: GCM authentication must fail
      await t.db.dataSource.query(
        `UPDATE certificates SET password_sealed = jsonb_set(password_sealed, '{ct}', to_jsonb($2::text)) WHERE organization_id = $1`,
        [o.orgId, randomBytes(40).toString('base64')],
      );
      const res = await ask(o);
      expect(res.status).to.equal(422);
      expect(res.body).to.include({ code: 'cert.kms.auth_failed', next_action: 'reseed_certificate' });
    });
  });

  describe('when the master key is not available', () => {
    let noKms: TestApi;
    before(async () => {
      noKms = await startTestApi({ keys: new LocalKeyWrapper({}, null) });
    });
    after(async () => noKms?.close());

    it('answers 503 caf.kms_unavailable and cert.kms_unavailable', async () => {
      const rut = newRut();
      const s = await noKms.seed({ rut });
      // a certificate row sealed under a key this process does not hold
      await noKms.db.dataSource.query(
        `INSERT INTO certificates (organization_id, label, rut, subject, serial_number, fingerprint_sha256, not_before, not_after,
           p12_sealed, password_sealed, is_default)
         VALUES ($1, 'l', $2, 's', '01', 'ff', now() - interval '1 day', now() + interval '1 year',
           '{"v":1,"alg":"A256GCM","kid":"old","wk":"AAAA","ct":"AAAA"}', '{"v":1,"alg":"A256GCM","kid":"old","wk":"AAAA","ct":"AAAA"}', true)`,
        [s.organization_id, rut],
      );
      let res = await call(noKms.url, 'POST', '/caf', {
        key: s.api_key,
        form: cafForm(
          createTestCaf({
            siiKey: noKms.sim.siiKeys.cert,
            rutEmisor: rut,
            razonSocial: 'X',
            tipoDte: 33,
            desde: 1,
            hasta: 5,
            fechaAutorizacion: today(),
            keyBits: 512,
          }),
        ),
      });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('caf.kms_unavailable');
      res = await call(noKms.url, 'POST', '/caf/request', {
        key: s.api_key,
        json: { tipo_dte: 33, cantidad: 5 },
      });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('cert.kms_unavailable');
    });
  });
});
