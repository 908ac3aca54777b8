import { ServiceError } from '@dte/error-catalog';
import { TASA_IVA } from './totals';

/** Item of the boleta shape (POST /boletas): amounts gross, VAT included. */
export interface BoletaItemInput {
  nombre: string;
  cantidad: number;
  precio_unitario: number;
  exento: boolean;
  monto_item: number;
}

export interface BoletaTotals {
  montoNeto: number;
  iva: number;
  montoExento: number;
  montoTotal: number;
}

/** round(a / b) for integers, half away from zero, exactly. */
function roundDiv(a: bigint, b: bigint): bigint {
  const negative = a < 0n !== b < 0n;
  const [x, y] = [a < 0n ? -a : a, b < 0n ? -b : b];
  const q = (2n * x + y) / (2n * y);
  return negative ? -q : q;
}

/**
 * Totals of a boleta (contract pending certification), as the spec gives them: amounts are
 * gross; for 39 taxable and exempt items are separated first, monto_neto = round(taxable /
 * 1.19), iva = taxable - monto_neto, and the exempt portion goes whole to monto_exento; for 41
 * everything goes to monto_exento and a taxable item answers dte.41.afecto_not_allowed.
 * Declared amounts of the body are ignored (always derived from the items).
 */
export function computeBoletaTotals(tipo: 39 | 41, items: readonly BoletaItemInput[]): BoletaTotals {
  if (tipo === 41) {
    const i = items.findIndex((it) => !it.exento);
    if (i >= 0) {
      throw new ServiceError(
        'dte.41.afecto_not_allowed',
        `a boleta exenta (41) cannot carry taxable items: items[${i}]`,
        {
          detail: { field: `items[${i}].exento` },
        },
      );
    }
  }
  let taxable = 0n;
  let exento = 0n;
  for (const it of items) {
    if (it.exento) exento += BigInt(it.monto_item);
    else taxable += BigInt(it.monto_item);
  }
  // monto_neto = round(taxable * 100 / (100 + TasaIVA)), half away from zero
  const neto = roundDiv(taxable * 100n, BigInt(100 + TASA_IVA));
  return {
    montoNeto: Number(neto),
    iva: Number(taxable - neto),
    montoExento: Number(exento),
    montoTotal: Number(taxable + exento),
  };
}
