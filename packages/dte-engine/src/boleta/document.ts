import { ServiceError } from '@dte/error-catalog';

import { computeBoletaTotals, type BoletaTotals } from '../input/boleta';
import { xmlText } from '../input/latin1';
import { isValidRut, normalizeRut } from '../input/rut';
import type { EmisorProfile } from '../input/types';
import { boletaFechaWindow } from '../input/santiago-date';

/**
 * Boletas 39 and 41 (POST /boletas, contract pending certification) and the document model of
 * EnvioBOLETA_v11.xsd (BOLETADefType), which is NOT DTE_v10's: the issuer is RznSocEmisor /
 * GiroEmisor, IdDoc carries IndServicio, the receiver is optional but for its RUT, Totales have
 * no TasaIVA and the line amounts are gross (IndMntNeto absent).
 */
export type BoletaTipo = 39 | 41;

/** The RUT the SII gives an anonymous final consumer on a boleta (RUTRecep is required by the XSD). */
export const BOLETA_ANONYMOUS_RUT = '66666666-6';
/** IdDoc/IndServicio 3: "Boleta de Ventas y Servicios" */
export const IND_SERVICIO_VENTAS = 3;
/** EnvioBOLETA_v11.xsd: at most 1000 Detalle; the spec's shape allows 1-60 items. */
export const BOLETA_MAX_ITEMS = 60;

export interface BoletaInput {
  tipo_dte: BoletaTipo;
  rut_emisor: string;
  rut_receptor?: string;
  razon_social_receptor?: string;
  fecha_emision: string;
  items: { nombre: string; cantidad: number; precio_unitario: number; exento: boolean; monto_item: number }[];
  certificate_id?: string;
  sii_env?: 'cert' | 'prod';
}

export interface BoletaDetalle {
  NroLinDet: number;
  IndExe?: 1;
  NmbItem: string;
  QtyItem?: number;
  PrcItem?: number;
  MontoItem: number;
}

export interface BoletaDocument {
  Encabezado: {
    IdDoc: { TipoDTE: BoletaTipo; Folio: number; FchEmis: string; IndServicio: number };
    Emisor: {
      RUTEmisor: string;
      RznSocEmisor?: string;
      GiroEmisor?: string;
      DirOrigen?: string;
      CmnaOrigen?: string;
    };
    Receptor: { RUTRecep: string; RznSocRecep?: string };
    Totales: { MntNeto?: number; MntExe?: number; IVA?: number; MntTotal: number };
  };
  Detalle: BoletaDetalle[];
}

const SCALE = 1_000_000n;

/** A number of at most 6 decimals as an integer of millionths (exact). */
function micro(value: number): bigint {
  const [int, frac = ''] = value.toFixed(6).split('.');
  const sign = int!.startsWith('-') ? -1n : 1n;
  return sign * (BigInt(int!.replace('-', '')) * SCALE + BigInt(frac.padEnd(6, '0')));
}

/** round(cantidad × precio_unitario), half up, computed exactly. */
export function boletaLineAmount(cantidad: number, precio: number): number {
  const p = micro(cantidad) * micro(precio);
  const unit = SCALE * SCALE;
  return Number((2n * p + unit) / (2n * unit));
}

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('validation_failed', `${field}: ${message}`, {
    issues: [{ path: field, message }],
  });
}

/**
 * The checks of a boleta beyond its JSON Schema (schemas/http/boleta-emission.schema.json):
 * RUTs, 41 with taxable items (dte.41.afecto_not_allowed), each monto_item against
 * round(cantidad × precio_unitario) (amount_arithmetic), texts representable in ISO-8859-1 and
 * within the XSD. Declared totals are ignored (always derived). Returns the totals.
 */
export function checkBoleta(input: BoletaInput): BoletaTotals {
  if (!isValidRut(input.rut_emisor)) throw invalid('rut_emisor', 'not a valid RUT');
  if (input.rut_receptor !== undefined && !isValidRut(input.rut_receptor))
    throw invalid('rut_receptor', 'not a valid RUT');
  if (input.items.length === 0) throw new ServiceError('items_empty', 'a boleta needs at least one item');
  if (input.items.length > BOLETA_MAX_ITEMS)
    throw new ServiceError('items_exceed_max', `a boleta holds at most ${BOLETA_MAX_ITEMS} items`, {
      detail: { max: BOLETA_MAX_ITEMS },
    });
  const totals = computeBoletaTotals(input.tipo_dte, input.items);
  input.items.forEach((it, i) => {
    xmlText(it.nombre, `items[${i}].nombre`, 'NmbItem', 80);
    const expected = boletaLineAmount(it.cantidad, it.precio_unitario);
    if (expected !== it.monto_item) {
      throw new ServiceError(
        'amount_arithmetic',
        `items[${i}].monto_item ${it.monto_item} is not round(cantidad × precio_unitario) = ${expected}`,
        { detail: { field: `items[${i}].monto_item`, expected, declared: it.monto_item } },
      );
    }
  });
  if (input.razon_social_receptor !== undefined)
    xmlText(input.razon_social_receptor, 'razon_social_receptor', 'RznSocRecep', 100);
  return totals;
}

/**
 * A boleta's issue date against boletaFechaWindow (the clock's rule, apart from checkBoleta so
 * that stays pure): outside it, validation_failed at fecha_emision, as the DTE window answers.
 */
export function checkBoletaFecha(fecha: string, now: Date): void {
  const w = boletaFechaWindow(now);
  if (fecha < w.from || fecha > w.to)
    throw invalid(
      'fecha_emision',
      `must be between ${w.from} and ${w.to}: a boleta is dated the day of the sale (day 1 of the current month, or yesterday, through today, America/Santiago)`,
    );
}

/** The boleta as EnvioBOLETA_v11.xsd names it, with its folio and derived totals. */
export function buildBoletaDocument(
  input: BoletaInput,
  ctx: { emisor: EmisorProfile; folio: number },
): BoletaDocument {
  const t = checkBoleta(input);
  const e = ctx.emisor;
  const opt = (value: string | undefined, field: string, element: string, max: number) =>
    value ? xmlText(value, field, element, max) : undefined;
  const emisor: BoletaDocument['Encabezado']['Emisor'] = { RUTEmisor: normalizeRut(e.rut) };
  const rzn = opt(e.razonSocial, 'emisor.razon_social', 'RznSocEmisor', 100);
  if (rzn) emisor.RznSocEmisor = rzn;
  const giro = opt(e.giro, 'emisor.giro', 'GiroEmisor', 80);
  if (giro) emisor.GiroEmisor = giro;
  const dir = opt(e.direccion, 'emisor.direccion', 'DirOrigen', 70);
  if (dir) emisor.DirOrigen = dir;
  const cmna = opt(e.comuna, 'emisor.comuna', 'CmnaOrigen', 20);
  if (cmna) emisor.CmnaOrigen = cmna;
  const receptor: BoletaDocument['Encabezado']['Receptor'] = {
    RUTRecep: input.rut_receptor ? normalizeRut(input.rut_receptor) : BOLETA_ANONYMOUS_RUT,
  };
  if (input.razon_social_receptor) receptor.RznSocRecep = input.razon_social_receptor;
  const totales: BoletaDocument['Encabezado']['Totales'] = { MntTotal: t.montoTotal };
  if (input.tipo_dte === 39 && t.montoNeto > 0) totales.MntNeto = t.montoNeto;
  if (t.montoExento > 0 || input.tipo_dte === 41) totales.MntExe = t.montoExento;
  // IVA is a positiveInteger in the XSD: absent when zero
  if (input.tipo_dte === 39 && t.iva > 0) totales.IVA = t.iva;
  return {
    Encabezado: {
      IdDoc: {
        TipoDTE: input.tipo_dte,
        Folio: ctx.folio,
        FchEmis: input.fecha_emision,
        IndServicio: IND_SERVICIO_VENTAS,
      },
      Emisor: emisor,
      Receptor: receptor,
      Totales: totales,
    },
    Detalle: input.items.map((it, i) => {
      const d: BoletaDetalle = { NroLinDet: i + 1, NmbItem: it.nombre, MontoItem: it.monto_item };
      if (it.exento) d.IndExe = 1;
      d.QtyItem = it.cantidad;
      // Dec5Type starts at 0.000001: a zero price is left out
      if (it.precio_unitario > 0) d.PrcItem = it.precio_unitario;
      return d;
    }),
  };
}
