import { Element } from '@xmldom/xmldom';

import { EXPORT_TYPES, TipoDte } from './model';
import { childElements, childText, firstChild } from './xml/dom';

/** ImptoReten codes that are withheld (subtracted from the total) rather than added: 15 = IVA retenido total. */
const RETENTION_CODES = new Set([15]);

/**
 * The header arithmetic of a signed document as a reader can check it from the XML alone:
 * IVA = round(MntNeto × TasaIVA / 100) (half up) and MntTotal = MntNeto + MntExe + IVA ± ImptoReten
 * (withheld codes subtract, additional taxes add); exports: MntTotal = MntExe. The full rules
 * (discounts, surcharges, rounding per line) live in the input side's computeTotals.
 */
export function checkTotalsArithmetic(documento: Element): string | undefined {
  const enc = firstChild(documento, 'Encabezado');
  const tot = enc ? firstChild(enc, 'Totales') : undefined;
  if (!enc || !tot) return 'no Encabezado/Totales';
  const num = (name: string): number => Number(childText(tot, name) ?? 0);
  const tipo = Number(childText(enc, 'IdDoc', 'TipoDTE')) as TipoDte;
  const total = num('MntTotal');
  if (EXPORT_TYPES.includes(tipo)) {
    return Math.abs(num('MntExe') - total) < 1e-9
      ? undefined
      : `MntTotal ${total} differs from MntExe ${num('MntExe')}`;
  }
  const neto = num('MntNeto');
  const iva = num('IVA');
  const tasa = num('TasaIVA');
  if (neto > 0 && tasa > 0) {
    const expectedIva = Math.round((neto * tasa) / 100);
    if (expectedIva !== iva) return `IVA ${iva} differs from round(${neto} x ${tasa}%) = ${expectedIva}`;
  }
  let expected = neto + num('MntExe') + iva;
  for (const imp of childElements(tot).filter((c) => c.localName === 'ImptoReten')) {
    const monto = Number(childText(imp, 'MontoImp') ?? 0);
    expected += RETENTION_CODES.has(Number(childText(imp, 'TipoImp'))) ? -monto : monto;
  }
  return expected === total ? undefined : `MntTotal ${total} differs from the sum of its parts ${expected}`;
}
