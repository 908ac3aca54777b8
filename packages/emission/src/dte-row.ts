import type { DataSource, EntityManager } from 'typeorm';
import { isUuid } from '@dte/database';

/** A row of `dtes` as node-postgres returns it (bigint as string, date as YYYY-MM-DD text). */
export interface DteRow {
  id: string;
  organization_id: string;
  company_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: string;
  caf_id: string;
  certificate_id: string;
  rut_emisor: string;
  rut_receptor: string | null;
  razon_social_receptor: string;
  fecha_emision: string;
  monto_neto: string;
  monto_exento: string;
  iva: string;
  monto_total: string;
  document: Record<string, unknown>;
  signed_at: Date | null;
  has_xml: boolean;
  track_id: string | null;
  upload_id: string | null;
  sii_status: string;
  sii_glosa: string | null;
  observed_at: Date;
  sii_last_polled: Date | null;
  receptor_estado: string;
  idempotency_key: string;
  body_hash: string;
  created_at: Date;
}

/** Every column but the large ones (input, signed_xml); has_xml says whether it is signed. */
export const DTE_COLUMNS = `id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
  rut_emisor, rut_receptor, razon_social_receptor, to_char(fecha_emision, 'YYYY-MM-DD') AS fecha_emision,
  monto_neto, monto_exento, iva, monto_total, document, signed_at, (signed_xml IS NOT NULL) AS has_xml,
  track_id, upload_id, sii_status, sii_glosa, observed_at, sii_last_polled, receptor_estado,
  idempotency_key, body_hash, created_at`;

/**
 * When the SII was last asked about the document: its own column (written with each status the
 * poller or the reconciler gives it) or its envelope's last poll (`sii_polls.polled_at`: a poll
 * that changes nothing writes only the envelope's row), whichever is later.
 */
export const LAST_POLLED_SQL = `GREATEST(dtes.sii_last_polled,
  (SELECT sp.polled_at FROM sii_polls sp WHERE sp.upload_id = dtes.upload_id))`;

/** DTE_COLUMNS with sii_last_polled as LAST_POLLED_SQL (the list, whose rows carry it). */
export const LIST_COLUMNS = DTE_COLUMNS.replace('sii_last_polled,', `${LAST_POLLED_SQL} AS sii_last_polled,`);

/** Who may see a document: the organization, in the key's environment, and the key's company. */
export interface DteScope {
  organizationId: string;
  environment: string;
  companyId: string | null;
}

/** The document `id` within the caller's scope, or undefined (also for an id that is not a uuid). */
export async function findDte(
  db: DataSource | EntityManager,
  scope: DteScope,
  id: string,
): Promise<DteRow | undefined> {
  if (!isUuid(id)) return undefined;
  const rows: DteRow[] = await db.query(
    `SELECT ${DTE_COLUMNS} FROM dtes
      WHERE id = $1 AND organization_id = $2 AND sii_env = $3 AND ($4::uuid IS NULL OR company_id = $4)`,
    [id, scope.organizationId, scope.environment, scope.companyId],
  );
  return rows[0];
}
