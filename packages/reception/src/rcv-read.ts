/**
 * Reading the synchronized register of one (company, env, period), as `GET /rcv` shows it:
 * sales and purchases, each document with its SII state, and the differences between what we
 * issued and what the SII registered:
 *
 * - `no_registrado_en_sii`: one of our documents of the period the SII does not show (rejected,
 *   still in process, or lost);
 * - `no_emitido_por_el_servicio`: a sale the SII shows that this service did not issue;
 * - `monto_distinto`: both have it, with a different total.
 *
 * No snapshot yet: `rcv.not_found` (or `rcv.sync.failed` when every attempt so far failed).
 */
import { ServiceError } from '@dte/error-catalog';
import { openPeriods, PERIODO_RE, type SyncDb } from './rcv-sync';

export function checkPeriodo(periodo: unknown, now: Date): string {
  const p = typeof periodo === 'string' ? periodo : '';
  const current = openPeriods(now)[0] as string;
  if (!PERIODO_RE.test(p) || p > current)
    throw new ServiceError('rcv.period.invalid', 'periodo must be YYYY-MM and not in the future.', {
      detail: { periodo: p },
    });
  return p;
}

export interface RcvDocumentView {
  tipo_dte: number;
  folio: number;
  rut_emisor: string;
  rut_receptor: string | null;
  fecha_emision: string | null;
  fecha_recepcion_sii: string | null;
  monto_neto: number;
  monto_exento: number;
  iva: number;
  monto_total: number;
  /** registered, pending, claimed, accepted, not_included (NO_INCLUIR); null when the SII does not show it */
  sii_estado: string | null;
  /** the register's own fields (null when the SII does not show the document) */
  registro: RcvRegistroFields | null;
  eventos: string[];
  /** our own document: its id and the status our pipeline knows */
  dte_id: string | null;
  sii_status: string | null;
}

/** What the SII's register row says beyond the amounts above (purchases and sales). */
export interface RcvRegistroFields {
  razon_social: string | null;
  /** the state it is listed under: REGISTRO, PENDIENTE, NO_INCLUIR, RECLAMADO */
  estado_registro: string | null;
  iva_recuperable: number;
  iva_no_recuperable: number;
  codigo_iva_no_recuperable: number | null;
  iva_uso_comun: number;
  monto_activo_fijo: number;
  iva_activo_fijo: number;
  monto_sin_credito: number;
  otros_impuestos: { total: number; codigo: number | null; tasa: number | null };
  /** purchases: detTipoTransaccion (1 del giro … 7 no corresponde incluir) */
  tipo_compra: number | null;
  fecha_acuse: string | null;
  fecha_reclamo: string | null;
}

export interface RcvDifference {
  tipo: 'no_registrado_en_sii' | 'no_emitido_por_el_servicio' | 'monto_distinto';
  tipo_dte: number;
  folio: number;
  dte_id: string | null;
  monto_servicio?: number;
  monto_sii?: number;
}

export interface RcvPeriodView {
  periodo: string;
  sincronizacion: {
    estado: string;
    sincronizado_al: string | null;
    intentos: number;
    proximo_intento: string | null;
    ultimo_error: string | null;
  };
  ventas: RcvDocumentView[];
  compras: RcvDocumentView[];
  diferencias: RcvDifference[];
}

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function readRcvPeriod(
  db: SyncDb,
  q: { companyId: string; env: 'cert' | 'prod'; periodo: string },
): Promise<RcvPeriodView> {
  const [p] = await db.query(
    `SELECT status, synced_at, attempts, next_attempt_at, last_error FROM rcv_periods
      WHERE company_id = $1 AND sii_env = $2 AND periodo = $3`,
    [q.companyId, q.env, q.periodo],
  );
  if (!p || !p.synced_at) {
    if (p && (p.status === 'failed' || p.status === 'retrying'))
      throw new ServiceError(
        'rcv.sync.failed',
        `The SII register could not be read for ${q.periodo}: ${p.last_error ?? ''}`,
        {
          detail: { periodo: q.periodo, intentos: p.attempts, proximo_intento: p.next_attempt_at },
        },
      );
    throw new ServiceError(
      'rcv.not_found',
      `No snapshot of the register for ${q.periodo}: synchronize it first (POST /rcv).`,
      {
        detail: { periodo: q.periodo },
      },
    );
  }
  const rows: Row[] = await db.query(
    `SELECT r.*, to_char(r.fch_emis, 'YYYY-MM-DD') AS fch, d.monto_total AS own_total
       FROM rcv_documents r LEFT JOIN dtes d ON d.id = r.dte_id
      WHERE r.company_id = $1 AND r.sii_env = $2 AND r.periodo = $3
      ORDER BY r.operacion, r.tipo_dte, r.folio, r.rut_emisor`,
    [q.companyId, q.env, q.periodo],
  );
  const view = (r: Row): RcvDocumentView => ({
    tipo_dte: Number(r.tipo_dte),
    folio: Number(r.folio),
    rut_emisor: r.rut_emisor,
    rut_receptor: r.rut_receptor ?? null,
    fecha_emision: r.fch ?? null,
    fecha_recepcion_sii: r.fecha_recepcion ? new Date(r.fecha_recepcion).toISOString() : null,
    monto_neto: Number(r.mnt_neto),
    monto_exento: Number(r.mnt_exe),
    iva: Number(r.iva),
    monto_total: Number(r.mnt_total),
    sii_estado: r.in_sii ? r.sii_estado : null,
    registro: r.in_sii
      ? {
          razon_social: r.razon_social ?? null,
          estado_registro: r.sii_estado_raw ?? null,
          iva_recuperable: Number(r.iva),
          iva_no_recuperable: Number(r.iva_no_recuperable ?? 0),
          codigo_iva_no_recuperable: r.cod_iva_no_recuperable ?? null,
          iva_uso_comun: Number(r.iva_uso_comun ?? 0),
          monto_activo_fijo: Number(r.mnt_activo_fijo ?? 0),
          iva_activo_fijo: Number(r.iva_activo_fijo ?? 0),
          monto_sin_credito: Number(r.mnt_sin_credito ?? 0),
          otros_impuestos: {
            total: Number(r.otros_impuestos ?? 0),
            codigo: r.cod_otro_impuesto ?? null,
            tasa:
              r.tasa_otro_impuesto === null || r.tasa_otro_impuesto === undefined
                ? null
                : Number(r.tasa_otro_impuesto),
          },
          tipo_compra: r.tipo_compra ?? null,
          fecha_acuse: r.fecha_acuse ? new Date(r.fecha_acuse).toISOString() : null,
          fecha_reclamo: r.fecha_reclamo ? new Date(r.fecha_reclamo).toISOString() : null,
        }
      : null,
    eventos: r.eventos ?? [],
    dte_id: r.dte_id ?? null,
    sii_status: r.own_sii_status ?? null,
  });
  const diferencias: RcvDifference[] = [];
  for (const r of rows.filter((x) => x.operacion === 'ventas')) {
    const base = { tipo_dte: Number(r.tipo_dte), folio: Number(r.folio), dte_id: r.dte_id ?? null };
    if (r.dte_id && !r.in_sii) diferencias.push({ tipo: 'no_registrado_en_sii', ...base });
    else if (!r.dte_id && r.in_sii) diferencias.push({ tipo: 'no_emitido_por_el_servicio', ...base });
    else if (r.dte_id && r.own_total !== null && Number(r.own_total) !== Number(r.mnt_total))
      diferencias.push({
        tipo: 'monto_distinto',
        ...base,
        monto_servicio: Number(r.own_total),
        monto_sii: Number(r.mnt_total),
      });
  }
  return {
    periodo: q.periodo,
    sincronizacion: {
      estado: p.status,
      sincronizado_al: new Date(p.synced_at).toISOString(),
      intentos: Number(p.attempts),
      proximo_intento: p.next_attempt_at ? new Date(p.next_attempt_at).toISOString() : null,
      ultimo_error: p.last_error ?? null,
    },
    ventas: rows.filter((r) => r.operacion === 'ventas').map(view),
    compras: rows.filter((r) => r.operacion === 'compras').map(view),
    diferencias,
  };
}
