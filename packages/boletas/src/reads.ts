import type { DataSource } from 'typeorm';
import { DTE_COLUMNS, findDte, type DteRow, type DteScope, signedXml, dtePdf } from '@dte/emission';
import type { PrintLayout } from '@dte/printed-form';
import type { Redis } from 'ioredis';
import { ApiError } from '@dte/error-catalog';
import { boletaDetail, boletaRow, type BoletaSiiFinding } from './records';

export const BOLETA_TIPOS = [39, 41] as const;

export async function getBoletaOr404(db: DataSource, scope: DteScope, id: string): Promise<DteRow> {
  const row = await findDte(db, scope, id);
  if (!row || (row.tipo_dte !== 39 && row.tipo_dte !== 41))
    throw new ApiError('not_found', 'No such boleta.');
  return row;
}

/** GET /boletas/:id: the boleta with the SII's findings on it (boleta_sii_errors, the poller's). */
export async function getBoletaDetail(db: DataSource, scope: DteScope, id: string) {
  const row = await getBoletaOr404(db, scope, id);
  const found: { errors: BoletaSiiFinding[] }[] = await db.query(
    'SELECT errors FROM boleta_sii_errors WHERE dte_id = $1',
    [row.id],
  );
  return boletaDetail(row, found[0]?.errors ?? []);
}

/** GET /boletas: newest first, `limit` only (1-100, default 20, clamped); next_cursor is always null. */
export async function listBoletas(db: DataSource, scope: DteScope, rawLimit: unknown) {
  const n = Number.parseInt(String(rawLimit ?? ''), 10);
  const limit = Number.isFinite(n) ? Math.min(100, Math.max(1, n)) : 20;
  const rows: DteRow[] = await db.query(
    `SELECT ${DTE_COLUMNS} FROM dtes
      WHERE organization_id = $1 AND sii_env = $2 AND ($3::uuid IS NULL OR company_id = $3) AND tipo_dte IN (39, 41)
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [scope.organizationId, scope.environment, scope.companyId, limit],
  );
  return { boletas: rows.map(boletaRow), next_cursor: null };
}

/** GET /boletas/:id/xml: the signed boleta, or boleta.xml.not_yet_available. */
export async function boletaXml(db: DataSource, scope: DteScope, id: string): Promise<Buffer> {
  await getBoletaOr404(db, scope, id);
  try {
    return await signedXml(db, scope, id);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'dte.xml.not_yet_available')
      throw new ApiError('boleta.xml.not_yet_available', 'The boleta is not signed yet; poll it and retry.');
    throw err;
  }
}

/**
 * GET /boletas/:id/pdf: the printed form of a signed boleta (39/41), an 80 mm thermal ticket by
 * default (the retail customer's) or a letter page, with the PDF417 timbre of its TED, rendered
 * from the stored XML like a DTE's (dtePdf, cached the same way). Not signed yet:
 * boleta.xml.not_yet_available.
 */
export async function boletaPdf(
  db: DataSource,
  redis: Redis,
  scope: DteScope,
  id: string,
  layout: PrintLayout,
): Promise<{ pdf: Buffer; cached: boolean; filename: string }> {
  const row = await getBoletaOr404(db, scope, id);
  try {
    const out = await dtePdf(db, redis, scope, id, { copy: 'original', layout });
    return { ...out, filename: `boleta-${row.tipo_dte}-${row.folio}.pdf` };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'dte.pdf.not_signed')
      throw new ApiError('boleta.xml.not_yet_available', 'The boleta is not signed yet; poll it and retry.');
    throw err;
  }
}
