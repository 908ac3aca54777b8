import type { DataSource, EntityManager } from 'typeorm';
import { isUuid } from '@dte/database';
import { ApiError } from '@dte/error-catalog';

/** A company's branches (sucursales): the current ones, for emission and GET /sucursales. */
interface BranchRow {
  id: string;
  company_id: string;
  rut_emisor: string;
  nombre: string;
  codigo_sii: number | null;
  direccion: string;
  comuna: string;
}

const COLUMNS = `b.id, b.company_id, c.rut AS rut_emisor, b.nombre, b.codigo_sii, b.direccion, b.comuna`;

const record = (r: BranchRow) => ({
  id: r.id,
  rut_emisor: r.rut_emisor,
  nombre: r.nombre,
  codigo_sii: r.codigo_sii,
  direccion: r.direccion,
  comuna: r.comuna,
});

/**
 * A current (not closed) branch of the company, for `sucursal_id` on emission; anything else —
 * unknown id, closed, another company's — is 422 dte.sucursal.not_found.
 */
export async function currentBranch(db: DataSource | EntityManager, companyId: string, branchId: string) {
  const rows: BranchRow[] = isUuid(branchId)
    ? await db.query(
        `SELECT ${COLUMNS} FROM branches b JOIN companies c ON c.id = b.company_id
          WHERE b.id = $1 AND b.company_id = $2 AND b.closed_at IS NULL`,
        [branchId, companyId],
      )
    : [];
  if (!rows[0]) {
    throw new ApiError('dte.sucursal.not_found', 'sucursal_id is not a current branch of the company.', {
      detail: { sucursal_id: branchId },
    });
  }
  return record(rows[0]);
}

/** GET /sucursales (and the MCP tool listar_sucursales): current branches of one company or of all. */
export async function listCurrentBranches(
  db: Pick<DataSource, 'query'>,
  organizationId: string,
  companyId: string | null,
) {
  const rows: BranchRow[] = await db.query(
    `SELECT ${COLUMNS} FROM branches b JOIN companies c ON c.id = b.company_id
      WHERE c.organization_id = $1 AND ($2::uuid IS NULL OR c.id = $2) AND b.closed_at IS NULL
      ORDER BY c.rut, b.codigo_sii NULLS FIRST, b.nombre, b.id`,
    [organizationId, companyId],
  );
  return { data: rows.map(record), next_cursor: null };
}
