import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { orgWithCafs, otherCompanyOf, today, type DteOrg } from '../../services/api/test/dtes-fixtures';
import {
  call,
  newRut,
  startTestApi,
  type Answer,
  type TestApi,
} from '../../services/api/test/support/test-api';
import { enrol } from '../pipeline/harness';

/**
 * The test's own copy of the Ley 21.133 schedule (percent by year of issue), written from the law's
 * table independently of the engine's data: 10 % until 2019, +0.75 a year to 16 % in 2027, 17 %
 * from 2028.
 */
const LEY_21133: Record<number, number> = {
  2019: 10,
  2020: 10.75,
  2021: 11.5,
  2022: 12.25,
  2023: 13,
  2024: 13.75,
  2025: 14.5,
  2026: 15.25,
  2027: 16,
  2028: 17,
};
const rate = (fecha: string) => LEY_21133[Math.min(2028, Math.max(2019, Number(fecha.slice(0, 4))))]!;

describe('BHE behind BHE_ENABLED: issue with the legal retention, list, detail, annul within 3 months (SII simulator)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    t = await startTestApi({ env: { BHE_ENABLED: 'true' } });
    o = await orgWithCafs(t, { tipos: [] });
    await enrol(t, o);
  });
  after(() => t?.close());

  const issue = (json: Record<string, unknown>, idem: string = randomUUID()): Promise<Answer> =>
    call(t.url, 'POST', '/bhe', {
      key: o.key,
      json,
      headers: { 'Idempotency-Key': idem, 'X-Cert-Id': o.certId },
    });
  const bheBody = (over: Record<string, unknown> = {}) => ({
    rut_receptor: '76086428-5',
    razon_social_receptor: 'Cliente SpA',
    fecha_emision: today(),
    descripcion: 'Asesoría contable de octubre',
    monto_bruto: 500000,
    ...over,
  });
  const count = async () => Number((await t.db.dataSource.query('SELECT count(*) AS n FROM bhes'))[0].n);

  it('issues a BHE with the retention of its year computed by the service, numbered by the SII; the key replays it', async () => {
    const fecha = today();
    const expected = Math.round((500000 * rate(fecha)) / 100);
    const key = randomUUID();
    const res = await issue(bheBody(), key);
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({
      rut_emisor: o.rut,
      rut_receptor: '76086428-5',
      fecha_emision: fecha,
      periodo: fecha.slice(0, 7),
      monto_bruto: 500000,
      tasa_retencion: rate(fecha),
      monto_retencion: expected,
      monto_liquido: 500000 - expected,
      estado: 'vigente',
      anulada: false,
      retencion_por: 'receptor',
    });
    expect(res.body.numero).to.be.a('number');
    const sim = await fetch(`${t.sim.url}/cert/bhe/${o.rut}/${res.body.numero}`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    expect(sim).to.include({ estado: 'VIGENTE', retencion: expected, montoBruto: 500000 });
    const again = await issue(bheBody(), key);
    expect(again.body.id).to.equal(res.body.id);
    const detail = await call(t.url, 'GET', `/bhe/${res.body.id}`, { key: o.key });
    expect(detail.body).to.deep.equal(res.body);
  });

  it("signs with its own company's certificates only: another company's of the organization answers cert_not_found", async () => {
    const other = await otherCompanyOf(t, o);
    const before = await count();
    const res = await call(t.url, 'POST', '/bhe', {
      key: o.key,
      json: bheBody(),
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': other.certId },
    });
    expect(res.status, res.text).to.equal(404);
    expect(res.body.code).to.equal('cert_not_found');
    expect(await count()).to.equal(before);
  });

  it('answers bhe.retencion.mismatch with the expected value, and bhe.receptor.tipo_invalid, writing nothing', async () => {
    const before = await count();
    const fecha = '2025-12-01';
    const expected = Math.round((123457 * rate(fecha)) / 100); // 14.5 % in 2025
    const bad = await issue(bheBody({ fecha_emision: fecha, monto_bruto: 123457, retencion: expected + 1 }));
    expect(bad.status).to.equal(422);
    expect(bad.body.code).to.equal('bhe.retencion.mismatch');
    expect(bad.body.next_action).to.equal('use_calculated_retencion');
    expect((bad.body.detail as { expected: number }).expected).to.equal(expected);
    const self = await issue(bheBody({ rut_receptor: o.rut }));
    expect(self.status).to.equal(422);
    expect(self.body.code).to.equal('bhe.receptor.tipo_invalid');
    expect(await count()).to.equal(before);
    const ok = await issue(bheBody({ fecha_emision: fecha, monto_bruto: 123457, retencion: expected }));
    expect(ok.status, ok.text).to.equal(202);
    expect(ok.body).to.include({ tasa_retencion: 14.5, monto_retencion: expected, periodo: '2025-12' });
  });

  it('lists with filters by period, state and annulment, and annuls within 3 months but not after', async () => {
    const recent = await issue(bheBody({ monto_bruto: 80000 }));
    const old = await issue(bheBody({ fecha_emision: '2025-06-15', monto_bruto: 90000 }));
    expect(old.status, old.text).to.equal(202);
    const annul = await call(t.url, 'POST', `/bhe/${recent.body.id}/anular`, {
      key: o.key,
      json: { motivo: 'error en el monto' },
      headers: { 'X-Cert-Id': o.certId },
    });
    expect(annul.status, annul.text).to.equal(200);
    expect(annul.body).to.include({
      estado: 'anulada',
      anulada: true,
      motivo_anulacion: 'error en el monto',
    });
    const sim = await fetch(`${t.sim.url}/cert/bhe/${o.rut}/${recent.body.numero}`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    expect(sim.estado).to.equal('ANULADA');
    const late = await call(t.url, 'POST', `/bhe/${old.body.id}/anular`, {
      key: o.key,
      json: {},
      headers: { 'X-Cert-Id': o.certId },
    });
    expect(late.status).to.equal(422);
    expect(late.body.code).to.equal('bhe.plazo_anulacion.expired');
    expect(late.body.detail).to.deep.equal({ fecha_emision: '2025-06-15', limite: '2025-09-15' });
    expect((await call(t.url, 'GET', `/bhe/${old.body.id}`, { key: o.key })).body.estado).to.equal('vigente');

    const ids = async (q: string) =>
      ((await call(t.url, 'GET', `/bhe${q}`, { key: o.key })).body.bhes as { id: string }[]).map((b) => b.id);
    expect(await ids('?anulada=true')).to.deep.equal([recent.body.id]);
    expect(await ids('?estado=anulada')).to.deep.equal([recent.body.id]);
    expect(await ids('?periodo=2025-06')).to.deep.equal([old.body.id]);
    expect(await ids('?anulada=false&periodo=2025-06')).to.deep.equal([old.body.id]);
    expect(await ids('?anulada=false')).to.not.include(recent.body.id);
    const all = await call(t.url, 'GET', '/bhe?limit=2', { key: o.key });
    expect(all.body.next_cursor).to.equal(null);
    expect(all.body.bhes).to.have.length(2);
    const missing = await call(t.url, 'GET', `/bhe/${randomUUID()}`, { key: o.key });
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('bhe.not_found');
    expect(newRut()).to.be.a('string');
  });
});
