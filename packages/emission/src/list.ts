import { KNOWN_STATUSES } from '@dte/status';
import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import { decodeCursor, encodeCursor } from './cursor';
import { LAST_POLLED_SQL, LIST_COLUMNS, type DteRow, type DteScope } from './dte-row';
import { listRow } from './records';

export const LIST_SORTS = ['folio', 'monto_total', 'fecha_emision', 'sii_status', 'created_at'] as const;
export type ListSort = (typeof LIST_SORTS)[number];
export const LIST_DEFAULTS = { sort: 'created_at' as ListSort, dir: 'desc' as const, limit: 20 };
export const LIST_LIMIT = { min: 1, max: 100 };
export const RECEPTOR_ESTADOS = ['reclamado', 'aceptado', 'en_plazo', 'aceptado_tacito', 'sin_info'] as const;

/**
 * The SQL expression of each sort key, and the text form of its value carried in the cursor
 * (exact: created_at to the microsecond, so keyset comparisons see the same value PostgreSQL has).
 */
const SORT_SQL: Record<
  ListSort,
  { expr: string; text: string; cast: string; valid: (v: string) => boolean }
> = {
  folio: { expr: 'folio', text: 'folio::text', cast: 'bigint', valid: (v) => /^\d{1,19}$/.test(v) },
  monto_total: {
    expr: 'monto_total',
    text: 'monto_total::text',
    cast: 'bigint',
    valid: (v) => /^-?\d{1,19}$/.test(v),
  },
  fecha_emision: {
    expr: 'fecha_emision',
    text: `to_char(fecha_emision, 'YYYY-MM-DD')`,
    cast: 'date',
    valid: (v) => isDate(v),
  },
  sii_status: { expr: 'sii_status', text: 'sii_status', cast: 'text', valid: () => true },
  created_at: {
    expr: 'created_at',
    text: `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    cast: 'timestamptz',
    valid: (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(v) && !Number.isNaN(Date.parse(v)),
  },
};

function isDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return (
    d.getUTCFullYear() === Number(m[1]) &&
    d.getUTCMonth() === Number(m[2]) - 1 &&
    d.getUTCDate() === Number(m[3])
  );
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const RUT_SHAPE = /^[0-9]{1,8}-[0-9Kk]$/;

type Query = Record<string, string | string[] | undefined>;

export interface ListQuery {
  limit: number;
  sort: ListSort;
  dir: 'asc' | 'desc';
  cursor?: { value: string; id: string };
  polledSince?: string;
  tipoDte?: number;
  folio?: string;
  rutReceptor?: string;
  fechaDesde?: string;
  fechaHasta?: string;
  receptorEstado?: string;
  siiStatus?: string;
}

/** One value of a query parameter; a repeated parameter is as wrong as a malformed one. */
function one(q: Query, name: string, code: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new ApiError(code, `${name} may be given once.`);
  return v;
}

/**
 * Parses the query of GET /dtes by the spec: limit clamped to 1-100 (default 20; not a number →
 * default), unknown sort/dir → defaults, and one dte.list.* code (422 fix_query) per bad filter.
 */
export function parseListQuery(q: Query): ListQuery {
  const first = (name: string) => {
    const v = q[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const rawLimit = first('limit');
  let limit = LIST_DEFAULTS.limit;
  if (rawLimit !== undefined && /^-?\d+$/.test(rawLimit.trim())) {
    limit = Math.min(LIST_LIMIT.max, Math.max(LIST_LIMIT.min, Number(rawLimit.trim())));
  }
  const rawSort = first('sort');
  const sort = (LIST_SORTS as readonly string[]).includes(rawSort ?? '')
    ? (rawSort as ListSort)
    : LIST_DEFAULTS.sort;
  const rawDir = first('dir');
  const dir = rawDir === 'asc' || rawDir === 'desc' ? rawDir : LIST_DEFAULTS.dir;
  const out: ListQuery = { limit, sort, dir };

  const cursor = one(q, 'cursor', 'dte.list.cursor_invalido');
  if (cursor !== undefined) {
    const c = decodeCursor(cursor, sort, dir);
    if (!SORT_SQL[sort].valid(c.value))
      throw new ApiError(
        'dte.list.cursor_invalido',
        'The cursor is not valid here: malformed. Start again without cursor.',
      );
    out.cursor = { value: c.value, id: c.id };
  }
  const polled = one(q, 'polled_since', 'dte.list.polled_since_invalido');
  if (polled !== undefined) {
    if (!ISO_INSTANT.test(polled) || Number.isNaN(Date.parse(polled)))
      throw new ApiError(
        'dte.list.polled_since_invalido',
        'polled_since must be an ISO-8601 instant with a zone.',
      );
    out.polledSince = new Date(polled).toISOString();
  }
  const tipo = one(q, 'tipo_dte', 'dte.list.tipo_invalido');
  if (tipo !== undefined) {
    if (!/^\d{1,4}$/.test(tipo))
      throw new ApiError('dte.list.tipo_invalido', 'tipo_dte must be a numeric code.');
    out.tipoDte = Number(tipo);
  }
  const folio = one(q, 'folio', 'dte.list.folio_invalido');
  if (folio !== undefined) {
    if (!/^\d{1,10}$/.test(folio))
      throw new ApiError('dte.list.folio_invalido', 'folio must be an integer of up to 10 digits.');
    out.folio = String(BigInt(folio));
  }
  const rut = one(q, 'rut_receptor', 'dte.list.rut_receptor_invalido');
  if (rut !== undefined) {
    const compact = rut.replace(/\./g, '').trim();
    if (!RUT_SHAPE.test(compact))
      throw new ApiError('dte.list.rut_receptor_invalido', 'rut_receptor must look like 12345678-9.');
    const [body, dv] = compact.split('-');
    out.rutReceptor = `${body.replace(/^0+(?=\d)/, '')}-${dv.toUpperCase()}`;
  }
  for (const [name, field] of [
    ['fecha_emision_desde', 'fechaDesde'],
    ['fecha_emision_hasta', 'fechaHasta'],
  ] as const) {
    const v = one(q, name, 'dte.list.fecha_invalida');
    if (v !== undefined) {
      if (!isDate(v)) throw new ApiError('dte.list.fecha_invalida', `${name} must be a date YYYY-MM-DD.`);
      out[field] = v;
    }
  }
  const re = one(q, 'receptor_estado', 'dte.list.receptor_estado_invalido');
  if (re !== undefined) {
    if (!(RECEPTOR_ESTADOS as readonly string[]).includes(re))
      throw new ApiError(
        'dte.list.receptor_estado_invalido',
        `receptor_estado must be one of ${RECEPTOR_ESTADOS.join(', ')}.`,
      );
    out.receptorEstado = re;
  }
  const st = one(q, 'sii_status', 'dte.list.status_desconocido');
  if (st !== undefined) {
    if (!KNOWN_STATUSES.includes(st))
      throw new ApiError('dte.list.status_desconocido', `sii_status ${st} is not in the status vocabulary.`);
    out.siiStatus = st;
  }
  return out;
}

/** GET /dtes: one keyset page, ordered by (sort key, id) in `dir`, and the cursor of the next. */
export async function listDtes(db: DataSource, scope: DteScope, q: ListQuery) {
  const where: string[] = ['organization_id = $1', 'sii_env = $2'];
  const params: unknown[] = [scope.organizationId, scope.environment];
  const add = (sql: (p: string) => string, v: unknown) => {
    params.push(v);
    where.push(sql(`$${params.length}`));
  };
  if (scope.companyId) add((p) => `company_id = ${p}`, scope.companyId);
  if (q.polledSince) add((p) => `${LAST_POLLED_SQL} >= ${p}::timestamptz`, q.polledSince);
  if (q.tipoDte !== undefined) add((p) => `tipo_dte = ${p}`, q.tipoDte);
  if (q.folio) add((p) => `folio = ${p}::bigint`, q.folio);
  if (q.rutReceptor) add((p) => `rut_receptor = ${p}`, q.rutReceptor);
  if (q.fechaDesde) add((p) => `fecha_emision >= ${p}::date`, q.fechaDesde);
  if (q.fechaHasta) add((p) => `fecha_emision <= ${p}::date`, q.fechaHasta);
  if (q.receptorEstado) add((p) => `receptor_estado = ${p}`, q.receptorEstado);
  if (q.siiStatus) add((p) => `sii_status = ${p}`, q.siiStatus);
  const s = SORT_SQL[q.sort];
  if (q.cursor) {
    params.push(q.cursor.value, q.cursor.id);
    const op = q.dir === 'desc' ? '<' : '>';
    where.push(`(${s.expr}, id) ${op} ($${params.length - 1}::${s.cast}, $${params.length}::uuid)`);
  }
  params.push(q.limit + 1);
  const order = q.dir === 'desc' ? 'DESC' : 'ASC';
  const rows: (DteRow & { sort_value: string })[] = await db.query(
    `SELECT ${LIST_COLUMNS}, ${s.text} AS sort_value FROM dtes
      WHERE ${where.join(' AND ')}
      ORDER BY ${s.expr} ${order}, id ${order}
      LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  const next =
    rows.length > q.limit && last
      ? encodeCursor({ sort: q.sort, dir: q.dir, value: last.sort_value, id: last.id })
      : null;
  return { data: page.map(listRow), next_cursor: next };
}
