import { santiagoDate } from '@dte/engine';
import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import type { DteScope } from './dte-row';

const PERIODO = /^([0-9]{4})-(0[1-9]|1[0-2])$/;

/** `periodo` of GET /dtes/totales: YYYY-MM, default the current month in America/Santiago. */
export function parsePeriodo(value: unknown, now: Date): string {
  if (value === undefined || value === '') return santiagoDate(now).slice(0, 7);
  // the year from 1: there is no year 0 ('0000-01-01' is not a date to PostgreSQL)
  if (typeof value !== 'string' || !PERIODO.test(value) || value.startsWith('0000')) {
    throw new ApiError('dte.totales.query_invalid', 'periodo must be a month YYYY-MM (01 to 12).', {
      detail: { periodo: value },
    });
  }
  return value;
}

interface Amounts {
  cantidad: number;
  monto_neto: number;
  monto_exento: number;
  iva: number;
  monto_total: number;
}

interface GroupRow {
  tipo_dte: number | null;
  sii_status: string | null;
  g_tipo: number;
  g_status: number;
  cantidad: string;
  monto_neto: string;
  monto_exento: string;
  iva: string;
  monto_total: string;
}

const amounts = (r: GroupRow): Amounts => ({
  cantidad: Number(r.cantidad),
  monto_neto: Number(r.monto_neto),
  monto_exento: Number(r.monto_exento),
  iva: Number(r.iva),
  monto_total: Number(r.monto_total),
});

/**
 * GET /dtes/totales: the documents of the caller's organization, environment (and the key's
 * company) whose fecha_emision (the tax period) falls in `periodo`, counted and summed per
 * tipo_dte and per sii_status, and in all, by ONE query with GROUPING SETS. Amounts are each
 * document's own (CLP, as stored): a credit note's total is not subtracted from anything.
 */
export async function dteTotales(db: DataSource, scope: DteScope, periodo: string) {
  const from = `${periodo}-01`;
  const rows: GroupRow[] = await db.query(
    `SELECT tipo_dte, sii_status, GROUPING(tipo_dte) AS g_tipo, GROUPING(sii_status) AS g_status,
            count(*) AS cantidad, COALESCE(sum(monto_neto), 0) AS monto_neto,
            COALESCE(sum(monto_exento), 0) AS monto_exento, COALESCE(sum(iva), 0) AS iva,
            COALESCE(sum(monto_total), 0) AS monto_total
       FROM dtes
      WHERE organization_id = $1 AND sii_env = $2 AND ($3::uuid IS NULL OR company_id = $3)
        AND fecha_emision >= $4::date AND fecha_emision < ($4::date + interval '1 month')
      GROUP BY GROUPING SETS ((tipo_dte), (sii_status), ())`,
    [scope.organizationId, scope.environment, scope.companyId, from],
  );
  const total = rows.find((r) => r.g_tipo === 1 && r.g_status === 1);
  return {
    periodo,
    sii_env: scope.environment,
    total: total ? amounts(total) : { cantidad: 0, monto_neto: 0, monto_exento: 0, iva: 0, monto_total: 0 },
    por_tipo: rows
      .filter((r) => r.g_tipo === 0)
      .map((r) => ({ tipo_dte: Number(r.tipo_dte), ...amounts(r) }))
      .sort((a, b) => a.tipo_dte - b.tipo_dte),
    por_estado: rows
      .filter((r) => r.g_status === 0)
      .map((r) => ({ sii_status: String(r.sii_status), ...amounts(r) }))
      .sort((a, b) => a.sii_status.localeCompare(b.sii_status)),
  };
}
