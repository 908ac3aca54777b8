// The simulator reviews amounts as the SII does (issue 29): before, any total passed (DOK), so a
// totals bug could pass every test. A document whose total is not the sum of its parts is now
// rejected (HED, level 3); a line that is not price × quantity gets a reparo (DET 200); the
// document with its figures right is accepted clean. Real signed documents over the real routes.
import { expect } from 'chai';

import { admin, estUp, upload } from './support/client';
import { COMPANY, envelope, factura, SENDER, signDte, World } from './support/world';

describe('sii-simulator: amounts checked like the SII (lines, sums, VAT, total)', function () {
  this.timeout(120_000);
  let w: World;
  let token: string;
  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    token = await w.login('cert');
  });
  after(() => w?.close());

  type Doc = { folio: number; result: string; detail: string[]; errors: Record<string, unknown>[] };
  const documents = async () => (await admin(w.sim.url, 'GET', '/admin/cert/documents')).json as Doc[];

  it('rejects a wrong total, gives a reparo to a wrong line, accepts the right figures', async () => {
    const caf = await w.grantCaf('cert', 33, 3);
    const right = factura(1, { neto: 10000 });
    const wrongTotal = factura(2, { neto: 10000 });
    wrongTotal.Encabezado.Totales.MntTotal = 11901; // 10000 + 1900 = 11900
    const wrongLine = factura(3, { neto: 10000 });
    wrongLine.Detalle[0]!.QtyItem = 2; // 2 × 10000 ≠ 10000
    const up = await upload(w.base('cert'), {
      token,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(right, caf), signDte(wrongTotal, caf), signDte(wrongLine, caf)]),
    });
    expect(up.status).to.equal('0');
    const st = await estUp(w.base('cert'), COMPANY, up.trackId!, token);
    expect(st.estado).to.equal('EPR');
    // the SII counts a reparo among the accepted
    expect([st.informados[0], st.aceptados[0], st.rechazados[0], st.reparos[0]]).to.deep.equal([3, 2, 1, 1]);
    const byFolio = new Map((await documents()).map((d) => [d.folio, d]));
    expect(byFolio.get(1)).to.include({ result: 'ACEPTADO' });
    expect(byFolio.get(1)!.errors).to.deep.equal([]);
    expect(byFolio.get(2)).to.include({ result: 'RECHAZADO' });
    expect(byFolio.get(2)!.errors).to.deep.equal([
      {
        seccion: 'HED',
        linea: 0,
        nivel: 3,
        codigo: 104,
        descripcion: 'Monto Total Distinto a Suma de Montos',
        detalle: 'MntTotal 11901 differs from the sum of its parts 11900',
      },
    ]);
    expect(byFolio.get(3)).to.include({ result: 'REPARO' });
    expect(byFolio.get(3)!.errors).to.deep.equal([
      {
        seccion: 'DET',
        linea: 1,
        nivel: 2,
        codigo: 200,
        descripcion: 'Valor Detalle Distinto a Precio * Cantidad',
        detalle: '[10000] <> [20000]',
      },
    ]);
  });
});
