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
 * How the SII annuls a BHE, by the day it is asked (the SII's own instructions for "Anular
 * boletas emitidas", as restated publicly): until day 10 of the month after the issue the
 * annulment takes effect at once (`inmediata`, the receiver is told by e-mail); from day 11 of
 * that month until 1 March of the year after the issue it is a request (`solicitud`) the receiver
 * must confirm: meanwhile the BHE stays valid ("vigente con solicitud de anulación pendiente",
 * VCA) and its retention must be declared and paid; the receiver may refuse it, and a request not
 * confirmed by that 1 March lapses, the BHE staying valid. After 1 March it cannot be annulled
 * (`vencida`). Dates are YYYY-MM-DD in Chile.
 */
export interface BheAnnulmentWindow {
  modo: 'inmediata' | 'solicitud' | 'vencida';
  /** last day of the immediate annulment: day 10 of the month after the issue */
  inmediataHasta: string;
  /** last day an annulment may be asked or confirmed: 1 March of the year after the issue */
  limite: string;
}

export function bheAnnulmentWindow(fechaEmision: string, hoy: string): BheAnnulmentWindow {
  const [y, m] = fechaEmision.split('-').map(Number) as [number, number, number];
  const next = new Date(Date.UTC(y, m, 10));
  const inmediataHasta = next.toISOString().slice(0, 10);
  const limite = `${String(y + 1).padStart(4, '0')}-03-01`;
  const modo = hoy <= inmediataHasta ? 'inmediata' : hoy <= limite ? 'solicitud' : 'vencida';
  return { modo, inmediataHasta, limite };
}

/** The last day a BHE issued on `fecha` may be annulled at all (bheAnnulmentWindow's limite). */
export function bheAnnulmentDeadline(fecha: string): string {
  return bheAnnulmentWindow(fecha, fecha).limite;
}

/**
 * The dates a BHE may carry, issued on `hoy`: not ahead of today, and within today's calendar
 * year, so it is never backdated into another year's retention rate (Ley 21.133 changes the rate
 * every 1 January) nor into a year whose income was already declared. Returns the reason it is
 * refused, or undefined.
 */
export function bheFechaProblem(fechaEmision: string, hoy: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fechaEmision)) return 'must be YYYY-MM-DD';
  if (fechaEmision > hoy) return `must not be after today (${hoy}, America/Santiago)`;
  if (fechaEmision.slice(0, 4) !== hoy.slice(0, 4))
    return `must be in the current year (${hoy.slice(0, 4)}): a BHE is never dated into another year's retention rate`;
  return undefined;
}
