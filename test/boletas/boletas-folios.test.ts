import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { orgWithCafs, today, uploadCaf, type DteOrg } from '../../services/api/test/dtes-fixtures';
import { call, startTestApi, type TestApi } from '../../services/api/test/support/test-api';

/** Batch folios: taken in order across CAFs by the allocator; a batch the CAFs cannot cover uses none. */
describe('boleta batch folios (api over real PostgreSQL, no pipeline)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let o: DteOrg;
  before(async () => {
    t = await startTestApi({ env: { BOLETAS_ENABLED: 'cert' } });
    o = await orgWithCafs(t, { tipos: [39], hasta: 5 });
    await uploadCaf(t, o.key, o.rut, { tipo: 39, desde: 6, hasta: 10 });
  });
  after(() => t?.close());

  const batch = (n: number) =>
    call(t.url, 'POST', '/boletas/batch', {
      key: o.key,
      headers: { 'X-Cert-Id': o.certId },
      json: {
        batch_idempotency_key: randomUUID(),
        boletas: Array.from({ length: n }, (_, i) => ({
          tipo_dte: 39,
          rut_emisor: o.rut,
          fecha_emision: today(),
          position: n - 1 - i,
          items: [
            { nombre: `P${i}`, cantidad: 1, precio_unitario: 100 + i, exento: false, monto_item: 100 + i },
          ],
        })),
      },
    });

  it('gives a batch consecutive folios across two CAFs, in entry order, each with its position', async () => {
    const res = await batch(8);
    expect(res.status, res.text).to.equal(202);
    const rows: { folio: string; batch_position: number; monto_total: string }[] =
      await t.db.dataSource.query(
        'SELECT folio, batch_position, monto_total FROM dtes WHERE batch_id = $1 ORDER BY folio',
        [res.body.batchId],
      );
    expect(rows.map((r) => Number(r.folio))).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(rows.map((r) => r.batch_position)).to.deep.equal([7, 6, 5, 4, 3, 2, 1, 0]);
    expect(rows.map((r) => Number(r.monto_total))).to.deep.equal([100, 101, 102, 103, 104, 105, 106, 107]);
    const events = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM dte_events WHERE dte_id IN (SELECT id FROM dtes WHERE batch_id = $1)`,
      [res.body.batchId],
    );
    expect(events[0].n).to.equal(8);
    const outbox = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM outbox WHERE payload->>'dte_id' IN (SELECT id::text FROM dtes WHERE batch_id = $1)`,
      [res.body.batchId],
    );
    expect(outbox[0].n).to.equal(16); // a command and a queued status each
    const other = await call(t.url, 'GET', '/boletas', { key: o.key });
    expect(other.body.boletas).to.have.length(8);
  });

  it('answers caf_exhausted for a batch the folios left cannot cover, and uses none', async () => {
    const res = await batch(3);
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('caf_exhausted');
    const left: { n: string }[] = await t.db.dataSource.query(
      `SELECT sum(hasta - next_folio + 1) AS n FROM cafs WHERE organization_id = $1 AND tipo_dte = 39`,
      [o.orgId],
    );
    expect(Number(left[0]!.n)).to.equal(2);
    const ok = await batch(2);
    expect(ok.status, ok.text).to.equal(202);
  });

  it('with BOLETAS_ENABLED=cert, a production key gets the 404 of an unknown path', async () => {
    const prod = await t.seed({ env: 'prod' });
    const a = await call(t.url, 'GET', '/boletas', { key: prod.api_key });
    const none = await call(t.url, 'GET', '/no-such-path', { key: prod.api_key });
    expect(a.status).to.equal(404);
    expect(a.body.code).to.equal('not_found');
    expect(Object.keys(a.body).sort()).to.deep.equal(Object.keys(none.body).sort());
    const cert = await call(t.url, 'GET', '/boletas', { key: o.key });
    expect(cert.status).to.equal(200);
  });
});

describe('boletas in production (BOLETAS_ENABLED=true)', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi({ env: { BOLETAS_ENABLED: 'true' } });
  });
  after(() => t?.close());

  it('a boleta type the company is not enabled for in production answers boleta.tipo_no_habilitado', async () => {
    const o = await orgWithCafs(t, { env: 'prod', prodTipos: [33], tipos: [] });
    await t.db.dataSource.query(
      `UPDATE companies SET resolucion_prod_numero = 80, resolucion_prod_fecha = '2014-08-22' WHERE id = $1`,
      [o.companyId],
    );
    const res = await call(t.url, 'POST', '/boletas', {
      key: o.key,
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': o.certId },
      json: {
        tipo_dte: 39,
        rut_emisor: o.rut,
        fecha_emision: today(),
        items: [{ nombre: 'P', cantidad: 1, precio_unitario: 100, exento: false, monto_item: 100 }],
      },
    });
    expect(res.status, res.text).to.equal(422);
    expect(res.body).to.include({
      code: 'boleta.tipo_no_habilitado',
      next_action: 'contact_support_to_enable_type',
    });
  });
});
