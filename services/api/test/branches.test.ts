/** GET /sucursales over HTTP; currentBranch and listCurrentBranches themselves: packages/tenancy/test. */
import { expect } from 'chai';
import { call, startTestApi, type TestApi } from './support/test-api';

describe('companies and branches', function () {
  this.timeout(60_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it("lists the current branches of the key's company only", async () => {
    const a = await t.seed({
      resolucion: { numero: 0, fecha: '2024-05-01' },
      branches: [
        { nombre: 'Casa Matriz', direccion: 'Av. Uno 1', comuna: 'Santiago', codigoSii: 81_234_567 },
        { nombre: 'Bodega', direccion: 'Calle Dos 2', comuna: 'Maipu' },
      ],
    });
    await t.seed({ branches: [{ nombre: 'Otra', direccion: 'X 1', comuna: 'Talca' }] });
    await t.db.dataSource.query(
      `UPDATE branches SET closed_at = now() WHERE nombre = 'Bodega' AND company_id = $1`,
      [a.company_id],
    );
    const res = await call(t.url, 'GET', '/sucursales', { key: a.api_key });
    expect(res.status).to.equal(200);
    const data = res.body.data as { nombre: string; codigo_sii: number | null }[];
    expect(data.map((d) => d.nombre)).to.deep.equal(['Casa Matriz']);
    expect(data[0].codigo_sii).to.equal(81_234_567);
    const company = (
      await t.db.dataSource.query(
        'SELECT resolucion_cert_numero, resolucion_cert_fecha::text AS f FROM companies WHERE id = $1',
        [a.company_id],
      )
    )[0];
    expect(company).to.deep.equal({ resolucion_cert_numero: 0, f: '2024-05-01' });
  });
});
