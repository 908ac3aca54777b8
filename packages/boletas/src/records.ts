import { classify } from '@dte/status';
import type { DteRow } from '@dte/emission';

/** One finding of the SII on the boleta, as its boleta REST status gave it (`error[]`). */
export interface BoletaSiiFinding {
  seccion: string;
  linea: number | null;
  nivel: number | null;
  codigo: number | string | null;
  descripcion: string;
  detalle: string | null;
}

const BASE = '/api/v1/boletas';

/** The spec's 202 answer of POST /boletas ("Boleta input"). */
export function boletaResponse(r: DteRow) {
  return {
    id: r.id,
    tipo_dte: r.tipo_dte,
    folio: Number(r.folio),
    status: r.sii_status,
    sii_status: r.sii_status,
    rut_emisor: r.rut_emisor,
    rut_receptor: r.rut_receptor,
    monto_neto: Number(r.monto_neto),
    monto_exento: Number(r.monto_exento),
    iva: Number(r.iva),
    monto_total: Number(r.monto_total),
    fecha_emision: r.fecha_emision,
    sii_env: r.sii_env,
    links: { self: `${BASE}/${r.id}`, xml: `${BASE}/${r.id}/xml` },
  };
}

/**
 * Detail: the emission response plus sii_glosa, track_id, created_at; and what a client needs to
 * act on the SII's answer: `estado` (the EstadoDte block: terminal, categoria, accion) and
 * `sii_errores`, the SII's findings on this boleta (section, line, level, code, description,
 * detail), empty when it has none.
 */
export function boletaDetail(r: DteRow, siiErrores: BoletaSiiFinding[] = []) {
  return {
    ...boletaResponse(r),
    sii_glosa: r.sii_glosa,
    estado: classify(r.sii_status),
    sii_errores: siiErrores,
    track_id: r.track_id === null ? null : Number(r.track_id),
    created_at: new Date(r.created_at).toISOString(),
  };
}

/** List rows: id, tipo_dte, folio, rut_emisor, rut_receptor, monto_total, sii_status, fecha_emision, created_at, links.self. */
export function boletaRow(r: DteRow) {
  return {
    id: r.id,
    tipo_dte: r.tipo_dte,
    folio: Number(r.folio),
    rut_emisor: r.rut_emisor,
    rut_receptor: r.rut_receptor,
    monto_total: Number(r.monto_total),
    sii_status: r.sii_status,
    fecha_emision: r.fecha_emision,
    created_at: new Date(r.created_at).toISOString(),
    links: { self: `${BASE}/${r.id}` },
  };
}
