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

/** A date of this year, `months` before this month (day `day`), or undefined when it falls in another year. */
function earlierThisYear(months: number, day: number): string | undefined {
  const now = today();
  const y = Number(now.slice(0, 4));
  const m = Number(now.slice(5, 7)) - months;
  if (m < 1) return undefined;
  return `${y}-${String(m).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

describe('BHE behind BHE_ENABLED: issue with the legal retention, list, detail, annul as the SII does (SII simulator)', function () {
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
    const fecha = `${today().slice(0, 4)}-01-02`;
    const expected = Math.round((123457 * rate(fecha)) / 100); // this year's rate
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
    expect(ok.body).to.include({
      tasa_retencion: rate(fecha),
      monto_retencion: expected,
      periodo: fecha.slice(0, 7),
    });
  });

  const annul = (id: string, json: Record<string, unknown> = {}) =>
    call(t.url, 'POST', `/bhe/${id}/anular`, { key: o.key, json, headers: { 'X-Cert-Id': o.certId } });
  const simBhe = (numero: unknown) =>
    fetch(`${t.sim.url}/cert/bhe/${o.rut}/${numero}`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );

  it('refuses a date ahead of today or in another year (another retention rate), writing nothing', async () => {
    const before = await count();
    const year = Number(today().slice(0, 4));
    for (const fecha of [`${year - 1}-12-31`, `${year + 1}-01-01`]) {
      const r = await issue(bheBody({ fecha_emision: fecha }));
      expect(r.status, `${fecha}: ${r.text}`).to.equal(400);
      expect(r.body.code).to.equal('validation_failed');
      expect((r.body.issues as { path: string }[])[0]!.path).to.equal('fecha_emision');
    }
    expect(await count()).to.equal(before);
  });

  it('annuls at once until day 10 of the next month; lists by state and annulment', async () => {
    const recent = await issue(bheBody({ monto_bruto: 80000 }));
    const a = await annul(recent.body.id as string, { motivo: 'error en el monto' });
    expect(a.status, a.text).to.equal(200);
    expect(a.body).to.include({
      estado: 'anulada',
      anulada: true,
      anulacion_pendiente: false,
      retencion_vigente: false,
      motivo_anulacion: 'error en el monto',
    });
    expect((await simBhe(recent.body.numero)).estado).to.equal('ANULADA');
    const ids = async (q: string) =>
      ((await call(t.url, 'GET', `/bhe${q}`, { key: o.key })).body.bhes as { id: string }[]).map((b) => b.id);
    expect(await ids('?anulada=true')).to.include(recent.body.id);
    expect(await ids('?estado=anulada')).to.include(recent.body.id);
    expect(await ids('?anulada=false')).to.not.include(recent.body.id);
    const all = await call(t.url, 'GET', '/bhe?limit=2', { key: o.key });
    expect(all.body.next_cursor).to.equal(null);
    expect(all.body.bhes).to.have.length(2);
    const missing = await call(t.url, 'GET', `/bhe/${randomUUID()}`, { key: o.key });
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('bhe.not_found');
    expect(newRut()).to.be.a('string');
  });

  it('after day 10 of the next month an annulment is a request: valid, retention declared, until the receiver confirms', async function () {
    // a BHE of an earlier month of this year, asked after day 10 of the month after it
    const fecha = Number(today().slice(8, 10)) > 10 ? earlierThisYear(1, 5) : earlierThisYear(2, 5);
    if (!fecha) return this.skip(); // early January: no earlier month in this year
    const b = await issue(bheBody({ fecha_emision: fecha, monto_bruto: 70000 }));
    expect(b.status, b.text).to.equal(202);
    const id = b.body.id as string;
    const asked = await annul(id, { motivo: 'servicio no prestado' });
    expect(asked.status, asked.text).to.equal(200);
    expect(asked.body).to.include({
      estado: 'anulacion_solicitada',
      anulada: false,
      anulacion_pendiente: true,
      retencion_vigente: true,
    });
    expect(asked.body.anulacion_solicitada_at).to.be.a('string');
    expect(asked.body.plazo_anulacion).to.deep.equal({
      inmediata_hasta: `${fecha.slice(0, 5)}${String(Number(fecha.slice(5, 7)) + 1).padStart(2, '0')}-10`,
      limite: `${Number(fecha.slice(0, 4)) + 1}-03-01`,
    });
    expect((await simBhe(b.body.numero)).estado).to.equal('VCA');
    // still valid: listed as not annulled; asking again changes nothing
    const ids = async (q: string) =>
      ((await call(t.url, 'GET', `/bhe${q}`, { key: o.key })).body.bhes as { id: string }[]).map((x) => x.id);
    expect(await ids('?anulada=false')).to.include(id);
    expect(await ids('?estado=anulacion_solicitada')).to.deep.equal([id]);
    expect((await annul(id)).body.estado).to.equal('anulacion_solicitada');
    expect((await call(t.url, 'GET', `/bhe/${id}`, { key: o.key })).body.estado).to.equal(
      'anulacion_solicitada',
    );
    // the receiver confirms at the SII: the next read sees it annulled
    const r = await fetch(`${t.sim.url}/admin/cert/bhe/${o.rut}/${b.body.numero}/confirmar-anulacion`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ acepta: true }),
    });
    expect(r.status).to.equal(200);
    const after = await call(t.url, 'GET', `/bhe/${id}`, { key: o.key });
    expect(after.body).to.include({ estado: 'anulada', anulada: true, retencion_vigente: false });

    // another request the receiver refuses: the BHE stays valid
    const c = await issue(bheBody({ fecha_emision: fecha, monto_bruto: 60000 }));
    await annul(c.body.id as string);
    await fetch(`${t.sim.url}/admin/cert/bhe/${o.rut}/${c.body.numero}/confirmar-anulacion`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ acepta: false }),
    });
    const refused = await call(t.url, 'GET', `/bhe/${c.body.id}`, { key: o.key });
    expect(refused.body).to.include({ estado: 'vigente', anulada: false, anulacion_pendiente: false });
  });

  it('refuses an annulment after 1 March of the year after the issue (bhe.plazo_anulacion.expired)', async () => {
    // a BHE of two years ago, recorded before this service's date rule (it cannot be issued today)
    const fecha = `${Number(today().slice(0, 4)) - 2}-06-15`;
    const [row] = await t.db.dataSource.query(
      `INSERT INTO bhes (id, organization_id, company_id, sii_env, idempotency_key, body_hash, rut_emisor, rut_receptor,
         fecha_emision, periodo, descripcion, monto_bruto, tasa_retencion, monto_retencion, monto_liquido, retencion_por,
         estado, numero_sii)
       VALUES ($1, $2, $3, 'cert', $4, 'x', $5, '76086428-5', $6, $7, 'antigua', 90000, 10, 9000, 81000, 'receptor',
         'vigente', 999999) RETURNING id`,
      [randomUUID(), o.orgId, o.companyId, randomUUID(), o.rut, fecha, fecha.slice(0, 7)],
    );
    const late = await annul(row.id as string);
    expect(late.status).to.equal(422);
    expect(late.body.code).to.equal('bhe.plazo_anulacion.expired');
    expect(late.body.detail).to.deep.equal({
      fecha_emision: fecha,
      limite: `${Number(fecha.slice(0, 4)) + 1}-03-01`,
    });
    expect((await call(t.url, 'GET', `/bhe/${row.id}`, { key: o.key })).body.estado).to.equal('vigente');
  });

  it('one SII number per company and environment: a second row with the same number is refused by the database', async () => {
    const b = await issue(bheBody({ monto_bruto: 50000 }));
    const err = await t.db.dataSource
      .query(
        `INSERT INTO bhes (id, organization_id, company_id, sii_env, idempotency_key, body_hash, rut_emisor, rut_receptor,
           fecha_emision, periodo, descripcion, monto_bruto, tasa_retencion, monto_retencion, monto_liquido, retencion_por,
           estado, numero_sii)
         SELECT $1, organization_id, company_id, sii_env, $2, body_hash, rut_emisor, rut_receptor, fecha_emision, periodo,
           descripcion, monto_bruto, tasa_retencion, monto_retencion, monto_liquido, retencion_por, estado, numero_sii
           FROM bhes WHERE id = $3`,
        [randomUUID(), randomUUID(), b.body.id],
      )
      .then(
        () => undefined,
        (e: { constraint?: string }) => e,
      );
    expect(err?.constraint).to.equal('bhes_numero_sii_uq');
  });
});
