import { expect } from 'chai';
import { createTestCaf, type SiiKey } from '@dte/engine';
import { body, emit, nextFolio, orgWithCafs, today, type DteOrg } from './dtes-fixtures';
import { cafForm, call, newRut, startTestApi, uploadCert, type TestApi } from './support/test-api';

/**
 * The organization gates of production (spec, Authentication item 7) over HTTP: an organization
 * not enabled for production issues nothing there (403 onboarding_production_not_authorized); an
 * enabled one issues only the types its company is certified for (422 dte.type.prod_not_certified,
 * dte.46.prod_not_certified), and gets no production folios for other types
 * (409 caf.type_not_prod_certified on upload, SII request and automatic stamping).
 */
describe('production gates over HTTP (organization enabled, types certified)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let prodSii: SiiKey;

  before(async () => {
    t = await startTestApi();
    prodSii = t.sim.siiKeys.prod;
  });
  after(async () => t?.close());

  const prodCaf = (rut: string, tipoDte: number) =>
    createTestCaf({
      siiKey: prodSii,
      rutEmisor: rut,
      razonSocial: 'EMPRESA DE PRUEBA',
      tipoDte,
      desde: 1,
      hasta: 20,
      fechaAutorizacion: today(),
      keyBits: 512,
    });

  /** a production company with its SII resolution, a certificate and a CAF of 33 */
  async function prodCompany(opts: { enabled: boolean; tipos: number[] }): Promise<DteOrg> {
    const rut = newRut();
    // the organization and company are created closed, opened below as asked
    const s = await t.seed({
      rut,
      env: 'prod',
      resolucion: { numero: 80, fecha: '2014-08-22' },
      giro: 'Venta de ferretería',
      direccion: 'Av. Providencia 1234',
      comuna: 'Providencia',
      actividadEconomica: 467300,
    });
    const certId = (await uploadCert(t, s.api_key, rut)).id as string;
    await t.db.dataSource.query(`UPDATE organizations SET prod_enabled = true WHERE id = $1`, [
      s.organization_id,
    ]);
    await t.db.dataSource.query(`UPDATE companies SET prod_tipos = ARRAY[33] WHERE id = $1`, [s.company_id]);
    const up = await call(t.url, 'POST', '/caf', { key: s.api_key, form: cafForm(prodCaf(rut, 33)) });
    expect(up.status, up.text).to.equal(201);
    await t.db.dataSource.query(`UPDATE organizations SET prod_enabled = $2 WHERE id = $1`, [
      s.organization_id,
      opts.enabled,
    ]);
    await t.db.dataSource.query(`UPDATE companies SET prod_tipos = $2 WHERE id = $1`, [
      s.company_id,
      opts.tipos,
    ]);
    return { key: s.api_key, rut, orgId: s.organization_id, companyId: s.company_id, certId };
  }

  const dteCount = async (o: DteOrg): Promise<number> =>
    Number(
      (await t.db.dataSource.query('SELECT count(*) AS n FROM dtes WHERE organization_id = $1', [o.orgId]))[0]
        .n,
    );

  it('answers onboarding_production_not_authorized (403) to an organization not enabled, before reading the body; nothing issued', async () => {
    const o = await prodCompany({ enabled: false, tipos: [33] });
    let res = await emit(t, o, body(33, o.rut));
    expect(res.status).to.equal(403);
    expect(res.body).to.include({ code: 'onboarding_production_not_authorized' });
    expect(res.body.request_id).to.be.a('string');
    // an invalid body gets the same answer: the organization's gate comes first
    res = await emit(t, o, { tipo_dte: 33 });
    expect(res.body.code).to.equal('onboarding_production_not_authorized');
    expect(await dteCount(o)).to.equal(0);
    expect(await nextFolio(t, o, 33)).to.equal(1);
  });

  it('answers dte.type.prod_not_certified (422) for a type the company is not certified for, and issues the certified one', async () => {
    const o = await prodCompany({ enabled: true, tipos: [33] });
    const res = await emit(t, o, body(34, o.rut));
    expect(res.status).to.equal(422);
    expect(res.body).to.include({
      code: 'dte.type.prod_not_certified',
      next_action: 'contact_support_to_enable_type',
    });
    expect(res.body.detail).to.deep.equal({ tipoDte: 34, certified: [33] });
    expect(await dteCount(o)).to.equal(0);
    const ok = await emit(t, o, body(33, o.rut));
    expect(ok.status, ok.text).to.equal(202);
    expect(ok.body).to.include({ folio: 1, sii_env: 'prod' });
  });

  it('answers dte.46.prod_not_certified with next_action emit_dte_46_in_cert for a factura de compra', async () => {
    const o = await prodCompany({ enabled: true, tipos: [33] });
    const res = await emit(t, o, body(46, o.rut));
    expect(res.status).to.equal(422);
    expect(res.body).to.include({ code: 'dte.46.prod_not_certified', next_action: 'emit_dte_46_in_cert' });
    expect(await dteCount(o)).to.equal(0);
  });

  it('leaves certification alone: the same company issues every type there', async () => {
    const o = await orgWithCafs(t, { tipos: [34, 46] });
    expect((await emit(t, o, body(34, o.rut))).status).to.equal(202);
    expect((await emit(t, o, body(46, o.rut))).status).to.equal(202);
  });

  it('refuses production CAFs of an uncertified type (caf.type_not_prod_certified, 409) on upload and on automatic stamping', async () => {
    const o = await prodCompany({ enabled: true, tipos: [33] });
    let res = await call(t.url, 'POST', '/caf', { key: o.key, form: cafForm(prodCaf(o.rut, 61)) });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('caf.type_not_prod_certified');
    expect(res.body.detail).to.deep.equal({ tipoDte: 61, certified: [33] });
    const cafs = await t.db.dataSource.query('SELECT tipo_dte FROM cafs WHERE organization_id = $1', [
      o.orgId,
    ]);
    expect(cafs).to.deep.equal([{ tipo_dte: 33 }]);

    res = await call(t.url, 'PUT', '/caf/auto', { key: o.key, json: { tipo_dte: 61, enabled: true } });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('caf.type_not_prod_certified');
    // disabling is never refused
    res = await call(t.url, 'PUT', '/caf/auto', { key: o.key, json: { tipo_dte: 61, enabled: false } });
    expect(res.status).to.equal(200);

    const closed = await prodCompany({ enabled: false, tipos: [33] });
    res = await call(t.url, 'POST', '/caf', { key: closed.key, form: cafForm(prodCaf(closed.rut, 33)) });
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ code: 'caf.type_not_prod_certified' });
    expect(res.body.detail).to.deep.equal({ tipoDte: 33, certified: [] });
  });

  it('asks the SII for production folios only for a certified type (POST /caf/request)', async () => {
    const o = await prodCompany({ enabled: true, tipos: [] });
    const enrol = await fetch(`${t.sim.url}/admin/prod/companies/${o.rut}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ senders: [o.rut], fchResol: '2014-08-22', nroResol: 80 }),
    });
    expect(enrol.status).to.equal(200);
    let res = await call(t.url, 'POST', '/caf/request', { key: o.key, json: { tipo_dte: 34, cantidad: 10 } });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('caf.type_not_prod_certified');
    // certified now: the request goes through at once (no lock was left) and the SII's first
    // grant of 34 starts at folio 1, so the refused request never reached it
    await t.seed({ org: await orgName(o), rut: o.rut, env: 'prod', prodTipos: [34] });
    res = await call(t.url, 'POST', '/caf/request', { key: o.key, json: { tipo_dte: 34, cantidad: 10 } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({
      tipo_dte: 34,
      desde: 1,
      hasta: 10,
      sii_env: 'prod',
      source: 'sii_request',
    });
  });

  it('the seed command opens the gates: --prod-tipos enables the organization and adds the types', async () => {
    const rut = newRut();
    const s = await t.seed({ rut, env: 'prod', prodTipos: [33, 61] });
    await t.seed({ org: await orgName({ orgId: s.organization_id }), rut, env: 'prod', prodTipos: [56, 33] });
    const rows = await t.db.dataSource.query(
      `SELECT o.prod_enabled, c.prod_tipos FROM companies c JOIN organizations o ON o.id = c.organization_id
        WHERE c.id = $1`,
      [s.company_id],
    );
    expect(rows).to.deep.equal([{ prod_enabled: true, prod_tipos: [33, 56, 61] }]);
  });

  async function orgName(o: { orgId: string }): Promise<string> {
    const rows: { name: string }[] = await t.db.dataSource.query(
      'SELECT name FROM organizations WHERE id = $1',
      [o.orgId],
    );
    return rows[0]!.name;
  }
});
