import { classify } from '@dte/status';
import type { DteRow } from './dte-row';
import { BASE_PATH } from '@dte/http-contract';

const int = (v: string | number | null) => (v === null ? null : Number(v));

export function dteLinks(id: string) {
  const self = `${BASE_PATH}/dtes/${id}`;
  return { self, pdf: `${self}/pdf`, xml: `${self}/xml`, events: `${self}/events` };
}

/** The emission response of POST /dtes (Resources > DTE records returned). */
export function emissionResponse(row: DteRow) {
  return {
    id: row.id,
    status: row.sii_status,
    folio: Number(row.folio),
    tipo_dte: row.tipo_dte,
    rut_emisor: row.rut_emisor,
    rut_receptor: row.rut_receptor,
    monto_neto: int(row.monto_neto),
    monto_exento: int(row.monto_exento),
    iva: int(row.iva),
    monto_total: int(row.monto_total),
    sii_env: row.sii_env,
    sii_status: row.sii_status,
    estado: classify(row.sii_status),
    track_id: int(row.track_id),
    fecha_emision: row.fecha_emision,
    created_at: new Date(row.created_at).toISOString(),
    links: dteLinks(row.id),
  };
}

interface DetalleLike {
  NroLinDet?: number;
  NmbItem?: string;
  DscItem?: string;
  QtyItem?: number;
  PrcItem?: number;
  MontoItem?: number;
  IndExe?: number;
}

/** GET /dtes/:id */
export function detailRecord(row: DteRow) {
  const detalle = ((row.document as { Detalle?: DetalleLike[] }).Detalle ?? []) as DetalleLike[];
  return {
    id: row.id,
    folio: Number(row.folio),
    tipo_dte: row.tipo_dte,
    rut_emisor: row.rut_emisor,
    rut_receptor: row.rut_receptor,
    razon_social_receptor: row.razon_social_receptor,
    monto_neto: int(row.monto_neto),
    monto_exento: int(row.monto_exento),
    iva: int(row.iva),
    monto_total: int(row.monto_total),
    sii_env: row.sii_env,
    sii_status: row.sii_status,
    sii_glosa: row.sii_glosa,
    estado: classify(row.sii_status),
    track_id: int(row.track_id),
    sii_last_polled: row.sii_last_polled ? new Date(row.sii_last_polled).toISOString() : null,
    receptor_estado: row.receptor_estado,
    fecha_emision: row.fecha_emision,
    signed_at: row.signed_at ? new Date(row.signed_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    items: detalle.map((d, i) => ({
      position: d.NroLinDet ?? i + 1,
      nombre: d.NmbItem ?? null,
      descripcion: d.DscItem ?? null,
      cantidad: d.QtyItem ?? null,
      precio_unitario: d.PrcItem ?? null,
      monto_item: d.MontoItem ?? null,
      exento: d.IndExe === 1,
    })),
    links: dteLinks(row.id),
  };
}

/** A row of GET /dtes */
export function listRow(row: DteRow) {
  return {
    id: row.id,
    folio: Number(row.folio),
    tipo_dte: row.tipo_dte,
    rut_emisor: row.rut_emisor,
    rut_receptor: row.rut_receptor,
    razon_social_receptor: row.razon_social_receptor,
    monto_total: int(row.monto_total),
    sii_env: row.sii_env,
    sii_status: row.sii_status,
    sii_glosa: row.sii_glosa,
    track_id: int(row.track_id),
    sii_last_polled: row.sii_last_polled ? new Date(row.sii_last_polled).toISOString() : null,
    receptor_estado: row.receptor_estado,
    fecha_emision: row.fecha_emision,
    created_at: new Date(row.created_at).toISOString(),
    links: { self: dteLinks(row.id).self },
  };
}
