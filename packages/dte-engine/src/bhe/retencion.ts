import { ServiceError } from '@dte/error-catalog';

/**
 * Retention (retención de impuesto) of a boleta de honorarios electrónica (BHE), by year of issue.
 *
 * Source: Ley N° 21.133 (Diario Oficial, 2 February 2019), which incorporates fee earners into
 * social protection and, in its transitional provisions, raises the retention of article 74 N° 2
 * of the Ley sobre Impuesto a la Renta (10 % until then) gradually: 0.75 points a year from 2020 to
 * 2027 and 1 point in 2028, ending at 17 %. The rate applies to the whole calendar year of the
 * receipt's issue date. The yearly figures, as published for taxpayers by the SII and restated by
 * the press each January: 2020 10.75 %, 2021 11.5 %, 2022 12.25 %, 2023 13 %, 2024 13.75 %,
 * 2025 14.5 %, 2026 15.25 %, 2027 16 %, 2028 and after 17 %.
 *
 * Rates are kept in basis points (hundredths of a percent) so the amounts are exact integers.
 */
export const BHE_RETENCION_SOURCE =
  'Ley N° 21.133 (D.O. 2019-02-02), disposiciones transitorias: retención del art. 74 N° 2 LIR, 10 % a 17 % (2028)';

export const BHE_RETENCION_BP: readonly { desde: number; hasta: number | null; bp: number }[] = [
  { desde: 0, hasta: 2019, bp: 1000 },
  { desde: 2020, hasta: 2020, bp: 1075 },
  { desde: 2021, hasta: 2021, bp: 1150 },
  { desde: 2022, hasta: 2022, bp: 1225 },
  { desde: 2023, hasta: 2023, bp: 1300 },
  { desde: 2024, hasta: 2024, bp: 1375 },
  { desde: 2025, hasta: 2025, bp: 1450 },
  { desde: 2026, hasta: 2026, bp: 1525 },
  { desde: 2027, hasta: 2027, bp: 1600 },
  { desde: 2028, hasta: null, bp: 1700 },
];

/** The rate of the year of `fecha` (YYYY-MM-DD), in basis points. */
export function bheRetencionBp(fecha: string): number {
  const year = Number(fecha.slice(0, 4));
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fecha) || !Number.isInteger(year))
    throw new ServiceError('validation_failed', `fecha_emision ${fecha} is not YYYY-MM-DD`, {
      issues: [{ path: 'fecha_emision', message: 'YYYY-MM-DD' }],
    });
  const row = BHE_RETENCION_BP.find((r) => year >= r.desde && (r.hasta === null || year <= r.hasta));
  return row!.bp;
}

export interface BheAmounts {
  montoBruto: number;
  /** percent, e.g. 15.25 */
  tasa: number;
  retencion: number;
  liquido: number;
}

/** retención = round(bruto × tasa), half up, in whole pesos; líquido = bruto − retención. */
export function computeBheRetencion(montoBruto: number, fecha: string): BheAmounts {
  if (!Number.isSafeInteger(montoBruto) || montoBruto <= 0)
    throw new ServiceError('validation_failed', 'monto_bruto must be a positive integer of CLP', {
      issues: [{ path: 'monto_bruto', message: 'positive integer' }],
    });
  const bp = bheRetencionBp(fecha);
  const retencion = Number((BigInt(montoBruto) * BigInt(bp) * 2n + 10000n) / 20000n);
  return { montoBruto, tasa: bp / 100, retencion, liquido: montoBruto - retencion };
}

/**
 * The last day a BHE issued on `fecha` may be annulled (the spec's limit: 3 months): the same day
 * of the month three months later, or that month's last day when it is shorter (e.g. 30 Nov →
 * 28/29 Feb).
 */
export function bheAnnulmentDeadline(fecha: string): string {
  const [y, m, d] = fecha.split('-').map(Number) as [number, number, number];
  const first = new Date(Date.UTC(y, m - 1 + 3, 1));
  const monthEnd = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  first.setUTCDate(Math.min(d, monthEnd));
  return first.toISOString().slice(0, 10);
}
