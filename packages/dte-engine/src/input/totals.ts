import { ServiceError } from '@dte/error-catalog';
import { Decimal } from './decimal';
import { validationFailed } from './errors';
import {
  isExportInput,
  type DomesticEmissionInput,
  type EmissionInput,
  type ExportEmissionInput,
} from './types';

/** IVA rate, percent (DL 825 art. 14). */
export const TASA_IVA = 19;
/** SII tax code 15: "IVA retenido total" (facturas de compra and their notes). */
export const TIPO_IMP_IVA_RETENIDO_TOTAL = 15;
/**
 * Decimals of export amounts in the document currency: 4 (XSD MontoItem/MntExe/MntTotal
 * fractionDigits 4), but whole units when the document currency is PESO CL (pesos have no
 * decimals; the same rule the reference implementations apply).
 */
export function exportDecimals(tpoMoneda: string): number {
  return tpoMoneda === 'PESO CL' ? 0 : 4;
}
/** Decimals of <TpoCambio> (Dec6_4). */
export const TPO_CAMBIO_DECIMALS = 4;

export interface LineTotals {
  /** <MontoItem>: CLP integer, or document currency (4 decimals) on exports */
  montoItem: number;
  /** <DescuentoMonto>, when the line has descuento_pct */
  descuentoMonto?: number;
  exento: boolean;
}

export interface Totals {
  /** "CLP" for domestic documents; the export's tpo_moneda otherwise */
  currency: string;
  lines: LineTotals[];
  /** amount of each descuento_global entry (positive; its sign comes from tipo) */
  globals: { amount: number; aplicaExento: boolean }[];
  /** <MntNeto>, <TasaIVA>, <IVA>: present when the document has taxable lines */
  montoNeto?: number;
  tasaIva?: number;
  iva?: number;
  /** <MntExe>: present when the document has exempt lines (exports: always) */
  montoExento?: number;
  /** <ImptoReten> code 15 MontoImp: IVA withheld by the buyer (type 46 and its notes) */
  ivaRetenido?: number;
  /** <IVANoRet>: IVA minus the withheld IVA; the SII omits it when 0 */
  ivaNoRetenido?: number;
  montoTotal: number;
  /** exports: the amounts restated in Chilean pesos, when an exchange rate is known */
  otraMoneda?: { tpoMoneda: 'PESO CL'; tpoCambio: number; montoExento: number; montoTotal: number };
  /** the record's integer CLP figures (exports: converted; absent while no rate is known) */
  clp?: { montoNeto: number; montoExento: number; iva: number; montoTotal: number };
}

/** True when the document's IVA is withheld in full by the emisor (type 46 and notes over a 46). */
export function isWithheld(input: EmissionInput): boolean {
  if (input.tipo_dte === 46) return true;
  if (input.tipo_dte !== 56 && input.tipo_dte !== 61) return false;
  const refs = input.references ?? [];
  return refs.length > 0 && refs.every((r) => r.tipo_doc_ref === 46);
}

/**
 * Totals of a validated emission body, by the rules of the SII's "Formato Documentos Tributarios
 * Electrónicos" v2.2. Every sum is exact; rounding happens only at the points written below,
 * half away from zero (Decimal.round). Exports need an exchange rate for OtraMoneda: the body's
 * otra_moneda.tpo_cambio, else `options.exchangeRate` (from the caller's source), else 1 when
 * the document currency is PESO CL; without one, OtraMoneda and the CLP figures are absent.
 */
export function computeTotals(input: EmissionInput, options: { exchangeRate?: number } = {}): Totals {
  return isExportInput(input) ? exportTotals(input, options.exchangeRate) : domesticTotals(input);
}

/**
 * An amount as a JS number, refusing the (absurd) amounts a double cannot hold exactly rather
 * than writing a silently different figure: validation_failed at `path`.
 */
function exact(value: Decimal, path: string): number {
  if (!value.isExactAsNumber()) {
    throw validationFailed([
      { path, message: `adds up to ${value.toString()}, beyond the amounts the service represents exactly` },
    ]);
  }
  return value.toNumber();
}

function domesticTotals(input: DomesticEmissionInput): Totals {
  const lines: LineTotals[] = [];
  let net = new Decimal(0n, 0);
  let exe = new Decimal(0n, 0);
  for (const item of input.items) {
    const gross = Decimal.of(item.cantidad).mul(Decimal.of(item.precio_unitario));
    // DescuentoMonto = round(QtyItem * PrcItem * DescuentoPct / 100), and
    // MontoItem = QtyItem * PrcItem - DescuentoMonto, rounded to whole pesos (MontoType is an
    // integer). This is the spec's item rule: cantidad*precio_unitario minus
    // round(cantidad*precio_unitario*descuento_pct/100).
    const descuento = item.descuento_pct
      ? gross.mul(Decimal.of(item.descuento_pct)).shift(2).round(0)
      : undefined;
    const monto = (descuento ? gross.sub(descuento) : gross).round(0);
    lines.push({
      montoItem: exact(monto, `items[${lines.length}]`),
      ...(descuento && !descuento.isZero() ? { descuentoMonto: descuento.toNumber() } : {}),
      exento: item.exento,
    });
    if (item.exento) exe = exe.add(monto);
    else net = net.add(monto);
  }

  // DscRcgGlobal: MntNeto = sum of taxable MontoItem - global discounts + global surcharges
  // (those without IndExeDR); MntExe likewise with the ones marked IndExeDR 1 (aplica_exento).
  // A percentage applies to the sum of the items it concerns (not compounded with the other
  // entries): ValorDR% x sum / 100, rounded to whole pesos. On type 34 every entry concerns the
  // exempt amounts.
  const itemsNet = net;
  const itemsExe = exe;
  const globals: Totals['globals'] = [];
  const issues: { path: string; message: string }[] = [];
  (input.descuento_global ?? []).forEach((g, i) => {
    const aplicaExento = input.tipo_dte === 34 || g.aplica_exento === true;
    const base = aplicaExento ? itemsExe : itemsNet;
    const amount = g.es_porcentaje ? base.mul(Decimal.of(g.valor)).shift(2).round(0) : Decimal.of(g.valor);
    globals.push({ amount: amount.toNumber(), aplicaExento });
    const signed = g.tipo === 'descuento' ? amount.neg() : amount;
    if (aplicaExento) exe = exe.add(signed);
    else net = net.add(signed);
    if ((aplicaExento ? exe : net).isNegative()) {
      issues.push({
        path: `descuento_global[${i}]`,
        message: `takes the ${aplicaExento ? 'exempt' : 'taxable'} amount below zero`,
      });
    }
  });
  if (issues.length > 0) throw validationFailed(issues.slice(0, 1));

  const hasTaxable = input.items.some((i) => !i.exento);
  const hasExempt = input.items.some((i) => i.exento) || globals.some((g) => g.aplicaExento);
  // IVA = round(MntNeto * TasaIVA / 100), whole pesos.
  const iva = hasTaxable ? net.mul(Decimal.of(TASA_IVA)).shift(2).round(0) : new Decimal(0n, 0);
  // Type 46 (and its notes): the buyer withholds all the IVA, code 15 "IVA retenido total";
  // MontoImp = TasaImp x (sum of the lines carrying code 15) = IVA, since every line carries it
  // and no global discount applies. IVANoRet = IVA - IVA retenido (0 here, so not written).
  const retenido = isWithheld(input) ? iva : new Decimal(0n, 0);
  // MntTotal = MntNeto + MntExe + IVA - IVA retenido.
  const total = net.add(exe).add(iva).sub(retenido);
  const noRet = iva.sub(retenido);
  exact(net.add(exe).add(iva), 'items');

  return {
    currency: 'CLP',
    lines,
    globals,
    ...(hasTaxable ? { montoNeto: net.toNumber(), tasaIva: TASA_IVA, iva: iva.toNumber() } : {}),
    ...(hasExempt ? { montoExento: exe.toNumber() } : {}),
    ...(isWithheld(input) ? { ivaRetenido: retenido.toNumber() } : {}),
    ...(isWithheld(input) && !noRet.isZero() ? { ivaNoRetenido: noRet.toNumber() } : {}),
    montoTotal: total.toNumber(),
    clp: {
      montoNeto: net.toNumber(),
      montoExento: exe.toNumber(),
      iva: iva.toNumber(),
      montoTotal: total.toNumber(),
    },
  };
}

function exportTotals(input: ExportEmissionInput, exchangeRate: number | undefined): Totals {
  const lines: LineTotals[] = [];
  let exe = new Decimal(0n, 0);
  for (const item of input.items) {
    // Exports: MontoItem = QtyItem * PrcItem in the document currency, rounded half away from
    // zero to exportDecimals() (4, or 0 in PESO CL); every line is exempt.
    const monto = Decimal.of(item.cantidad)
      .mul(Decimal.of(item.precio_unitario))
      .round(exportDecimals(input.tpo_moneda));
    lines.push({ montoItem: exact(monto, `items[${lines.length}]`), exento: true });
    exe = exe.add(monto);
  }
  // Export documents are exempt: MntExe = sum of MontoItem; MntTotal = MntExe.
  const total = exe;
  exact(total, 'items');

  let rate: Decimal | undefined;
  const declared = input.otra_moneda?.tpo_cambio;
  if (declared !== undefined) rate = Decimal.of(declared);
  else if (exchangeRate !== undefined) {
    if (!Number.isFinite(exchangeRate) || exchangeRate <= 0) {
      throw new TypeError(`exchangeRate must be a positive number, got ${exchangeRate}`);
    }
    // <TpoCambio> has 4 decimals: the caller's rate is rounded there and that rate is the one used.
    rate = Decimal.of(exchangeRate).round(TPO_CAMBIO_DECIMALS);
  } else if (input.tpo_moneda === 'PESO CL') rate = Decimal.of(1);

  const totals: Totals = {
    currency: input.tpo_moneda,
    lines,
    globals: [],
    montoExento: exe.toNumber(),
    montoTotal: total.toNumber(),
  };
  if (rate) {
    // OtraMoneda in PESO CL: amount x TpoCambio, rounded to whole pesos.
    const exeClp = exact(exe.mul(rate).round(0), 'items');
    const totalClp = exact(total.mul(rate).round(0), 'items');
    totals.otraMoneda = {
      tpoMoneda: 'PESO CL',
      tpoCambio: rate.toNumber(),
      montoExento: exeClp,
      montoTotal: totalClp,
    };
    totals.clp = { montoNeto: 0, montoExento: exeClp, iva: 0, montoTotal: totalClp };
  }
  return totals;
}

/** Whether buildDocument needs the caller's exchange rate for this input (exports without otra_moneda). */
export function needsExchangeRate(input: EmissionInput): boolean {
  return isExportInput(input) && input.otra_moneda === undefined && input.tpo_moneda !== 'PESO CL';
}

interface Mismatch {
  field: string;
  expected: number;
  declared: number;
}

/**
 * Declared amounts against computed ones: each item's monto_item, then monto_neto,
 * monto_exento, iva, monto_total (exports: monto_exento, monto_total and otra_moneda's
 * mnt_exe, mnt_total). A declared amount the document does not carry must be 0.
 * Any difference -> amount_arithmetic; detail names the first field (field, expected,
 * declared) and lists every mismatch.
 */
export function assertDeclaredAmounts(input: EmissionInput, totals: Totals): void {
  const mismatches: Mismatch[] = [];
  const check = (field: string, declared: number | undefined, expected: number): void => {
    if (declared !== undefined && !Decimal.of(declared).eq(Decimal.of(expected))) {
      mismatches.push({ field, expected, declared });
    }
  };
  input.items.forEach((item, i) =>
    check(`items[${i}].monto_item`, item.monto_item, totals.lines[i].montoItem),
  );
  if (isExportInput(input)) {
    check('monto_exento', input.monto_exento, totals.montoExento ?? 0);
    check('monto_total', input.monto_total, totals.montoTotal);
    if (input.otra_moneda && totals.otraMoneda) {
      check('otra_moneda.mnt_exe', input.otra_moneda.mnt_exe, totals.otraMoneda.montoExento);
      check('otra_moneda.mnt_total', input.otra_moneda.mnt_total, totals.otraMoneda.montoTotal);
    }
  } else {
    check('monto_neto', input.monto_neto, totals.montoNeto ?? 0);
    check('monto_exento', input.monto_exento, totals.montoExento ?? 0);
    check('iva', input.iva, totals.iva ?? 0);
    check('monto_total', input.monto_total, totals.montoTotal);
  }
  if (mismatches.length > 0) {
    const [first] = mismatches;
    throw new ServiceError(
      'amount_arithmetic',
      `${first.field} is ${first.declared} but the items add up to ${first.expected}`,
      { detail: { ...first, mismatches } },
    );
  }
}
