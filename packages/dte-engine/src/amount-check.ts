import { Element } from '@xmldom/xmldom';

import { EXPORT_TYPES, TipoDte } from './model';
import { checkTotalsArithmetic } from './totals-check';
import { childElements, childText, firstChild } from './xml/dom';

/**
 * One finding of the SII's amount review of a document, in the shape the SII reports it in the
 * boleta REST status (`detalle_rep_rech[].error[]`) and its result e-mail: the section
 * (`DET` a detail line, `HED` the header totals), the line (NroLinDet for `DET`, 0 for the
 * header), the level (1-2 objection, accepted with reparos; 3 rejection), the code, its
 * description and a detail `[declared] <> [expected]`.
 */
export interface AmountFinding {
  seccion: 'DET' | 'HED';
  linea: number;
  nivel: 1 | 2 | 3;
  codigo: number;
  descripcion: string;
  detalle: string;
}

/**
 * The codes. `DET 200` at level 2, "Valor Detalle Distinto a Precio * Cantidad", is the SII's own
 * answer to a line whose MontoItem is not (PrcItem × QtyItem) − DescuentoMonto + RecargoMonto
 * (a certification reply quoted publicly: "(DET L[1] -2-200) REPARO- Valor Detalle Distinto a
 * Precio * Cantidad", and the SII's boleta API sample); the SII accepts such a document with
 * reparos. The header codes (a total that is not the sum of its parts: rejection, level 3) are
 * this project's numbering, UNCONFIRMED against an SII list (none is public).
 */
export const AMOUNT_CODES = {
  lineAmount: { codigo: 200, descripcion: 'Valor Detalle Distinto a Precio * Cantidad' },
  netSum: { codigo: 101, descripcion: 'Monto Neto Distinto a Suma de Detalle Afecto' },
  exemptSum: { codigo: 102, descripcion: 'Monto Exento Distinto a Suma de Detalle Exento' },
  vat: { codigo: 103, descripcion: 'IVA Distinto a Monto Neto * Tasa' },
  total: { codigo: 104, descripcion: 'Monto Total Distinto a Suma de Montos' },
  otherCurrency: { codigo: 105, descripcion: 'Monto Otra Moneda Distinto a Monto Total * Tipo de Cambio' },
} as const;

const BOLETAS: readonly number[] = [39, 41];

/**
 * The amount review the SII makes of a document (Formato DTE v2.2, fields 38 MontoItem, 107
 * MntNeto, 108 MntExe, 112 IVA, 113 MntTotal): each line's MontoItem = PrcItem × QtyItem −
 * DescuentoMonto + RecargoMonto (lines without a price or quantity are not checked); MntNeto =
 * the taxable lines ± the global discounts and surcharges assigned to them (DscRcgGlobal, a
 * percentage of those lines or an amount), divided by 1 + rate when the amounts are gross
 * (IdDoc MntBruto 1, and boletas unless IndMntNeto 2, whose taxable lines add up to MntNeto + IVA);
 * MntExe = the exempt lines (IndExe 1) ± their globals; IVA = MntNeto × TasaIVA; MntTotal = the
 * sum of its parts (checkTotalsArithmetic). Exports (110-112) in their currency: MntExe = the
 * lines, MntTotal = MntExe, and OtraMoneda MntTotOtrMnda = MntTotal × TpoCambio.
 *
 * Rounding: a line may differ from its exact product by less than half its last unit (whole pesos;
 * 4 decimals in a foreign currency: 0.01 allowed, as issuers round to cents); a gross split and a
 * converted total by one peso.
 */
export function checkDocumentAmounts(documento: Element): AmountFinding[] {
  const enc = firstChild(documento, 'Encabezado');
  const tot = enc ? firstChild(enc, 'Totales') : undefined;
  if (!enc || !tot) return [];
  const tipo = Number(childText(enc, 'IdDoc', 'TipoDTE')) as TipoDte;
  const isExport = EXPORT_TYPES.includes(tipo);
  const lineTolerance = isExport ? 0.01 : 0.5;
  const findings: AmountFinding[] = [];
  const num = (el: Element, name: string): number | undefined => {
    const t = childText(el, name);
    return t === undefined || t.trim() === '' ? undefined : Number(t);
  };

  let taxable = 0;
  let exempt = 0;
  for (const det of childElements(documento).filter((c) => c.localName === 'Detalle')) {
    const linea = num(det, 'NroLinDet') ?? 0;
    const monto = num(det, 'MontoItem') ?? 0;
    const qty = num(det, 'QtyItem');
    const prc = num(det, 'PrcItem');
    // a dispatch guide that is not a sale may carry zero amounts (field 38, rule 2)
    if (qty !== undefined && prc !== undefined && !(tipo === 52 && monto === 0)) {
      const expected = qty * prc - (num(det, 'DescuentoMonto') ?? 0) + (num(det, 'RecargoMonto') ?? 0);
      if (Math.abs(monto - expected) > lineTolerance + 1e-9)
        findings.push({
          seccion: 'DET',
          linea,
          nivel: 2,
          ...AMOUNT_CODES.lineAmount,
          detalle: `[${monto}] <> [${round(expected, isExport ? 4 : 0)}]`,
        });
    }
    // an exempt document (34, 41, exports) has only exempt lines, marked or not
    const indExe = num(det, 'IndExe') ?? (tipo === 34 || tipo === 41 || isExport ? 1 : 0);
    if (indExe === 0) taxable += monto;
    else if (indExe === 1) exempt += monto;
    // 2 (not billable) and the others count in neither MntNeto nor MntExe
  }
  if (isExport) taxable = 0;

  // global discounts (D) and surcharges (R): on the taxable lines, or the exempt ones (IndExeDR 1)
  const baseTaxable = taxable;
  const baseExempt = exempt;
  for (const g of childElements(documento).filter((c) => c.localName === 'DscRcgGlobal')) {
    const indExe = num(g, 'IndExeDR') ?? 0;
    if (indExe > 1) continue;
    const onExempt = indExe === 1 || tipo === 34 || tipo === 41;
    const valor = num(g, 'ValorDR') ?? 0;
    const amount =
      childText(g, 'TpoValor') === '%'
        ? Math.round(((onExempt ? baseExempt : baseTaxable) * valor) / 100)
        : valor;
    const signed = childText(g, 'TpoMov') === 'D' ? -amount : amount;
    if (onExempt) exempt += signed;
    else taxable += signed;
  }

  const header = (key: keyof typeof AMOUNT_CODES, declared: number, expected: number) =>
    findings.push({
      seccion: 'HED',
      linea: 0,
      nivel: 3,
      ...AMOUNT_CODES[key],
      detalle: `[${declared}] <> [${round(expected, isExport ? 4 : 0)}]`,
    });
  const mntNeto = num(tot, 'MntNeto') ?? 0;
  const mntExe = num(tot, 'MntExe') ?? 0;
  const iva = num(tot, 'IVA') ?? 0;
  const mntTotal = num(tot, 'MntTotal') ?? 0;

  if (isExport) {
    if (Math.abs(mntExe - exempt) > 0.01 + 1e-9) header('exemptSum', mntExe, exempt);
    const otra = firstChild(tot, 'OtraMoneda') ?? firstChild(enc, 'OtraMoneda');
    const cambio = otra ? num(otra, 'TpoCambio') : undefined;
    const totOtra = otra ? num(otra, 'MntTotOtrMnda') : undefined;
    if (cambio !== undefined && totOtra !== undefined && Math.abs(totOtra - mntTotal * cambio) > 1 + 1e-9)
      header('otherCurrency', totOtra, mntTotal * cambio);
  } else {
    const gross = BOLETAS.includes(tipo)
      ? childText(enc, 'IdDoc', 'IndMntNeto') !== '2'
      : childText(enc, 'IdDoc', 'MntBruto') === '1';
    if (gross) {
      // the taxable lines carry VAT: they add up to MntNeto + IVA
      if (Math.abs(mntNeto + iva - taxable) > 1) header('netSum', mntNeto + iva, taxable);
      if (mntNeto > 0 && Math.abs(iva - mntNeto * 0.19) > 1) header('vat', iva, mntNeto * 0.19);
    } else if (Math.abs(mntNeto - taxable) > 0.5) header('netSum', mntNeto, taxable);
    if (Math.abs(mntExe - exempt) > 0.5) header('exemptSum', mntExe, exempt);
  }
  // IVA = round(MntNeto × TasaIVA) and MntTotal = the sum of its parts: the one header rule
  const arithmetic = checkTotalsArithmetic(documento);
  if (arithmetic) {
    const vat = /^IVA /.test(arithmetic);
    findings.push({
      seccion: 'HED',
      linea: 0,
      nivel: 3,
      ...(vat ? AMOUNT_CODES.vat : AMOUNT_CODES.total),
      detalle: arithmetic,
    });
  }
  return findings;
}

function round(n: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
}
