import { expect } from 'chai';
import { computeBoletaTotals } from '../../src/input';
import { caught } from './fixtures';

const it39 = (monto: number, exento = false) => ({
  nombre: 'x',
  cantidad: 1,
  precio_unitario: monto,
  exento,
  monto_item: monto,
});

describe('input: boleta totals (39/41, gross amounts)', () => {
  it('39: neto = round(taxable / 1.19), iva = taxable - neto, exempt apart', () => {
    // taxable 1190 + 1000 = 2190; 2190 / 1.19 = 1840.34 -> 1840; iva 350
    expect(computeBoletaTotals(39, [it39(1190), it39(1000)])).to.deep.equal({
      montoNeto: 1840,
      iva: 350,
      montoExento: 0,
      montoTotal: 2190,
    });
    // 1000 / 1.19 = 840.336 -> 840, iva 160; exempt 500
    expect(computeBoletaTotals(39, [it39(1000), it39(500, true)])).to.deep.equal({
      montoNeto: 840,
      iva: 160,
      montoExento: 500,
      montoTotal: 1500,
    });
    // 1005 / 1.19 = 844.54 -> 845 (rounds up), iva 160
    expect(computeBoletaTotals(39, [it39(1005)])).to.include({ montoNeto: 845, iva: 160 });
  });

  it('41: everything exempt; a taxable item answers dte.41.afecto_not_allowed', () => {
    expect(computeBoletaTotals(41, [it39(700, true)])).to.deep.equal({
      montoNeto: 0,
      iva: 0,
      montoExento: 700,
      montoTotal: 700,
    });
    const err = caught(() => computeBoletaTotals(41, [it39(700, true), it39(10)]));
    expect(err.code).to.equal('dte.41.afecto_not_allowed');
    expect(err.detail).to.deep.equal({ field: 'items[1].exento' });
  });
});
