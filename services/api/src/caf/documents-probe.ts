import type { DataSource } from 'typeorm';
import type { SiiEnv } from '../auth/scopes';

export interface CafRange {
  organizationId: string;
  environment: SiiEnv;
  tipoDte: number;
  rutEmisor: string;
  desde: number;
  hasta: number;
}

/**
 * What DELETE /caf/:id needs to know about documents issued with a CAF's folios. The documents
 * belong to the emission pipeline (issue 6); this interface is the seam between the two.
 */
export interface CafDocumentsProbe {
  usage(range: CafRange): Promise<{ accepted: number; ceded: number }>;
}

/** sii_status values that mean the SII accepted the document (spec, sii_status vocabulary). */
export const ACCEPTED_STATUSES = ['EPR', 'RPR', 'aceptado_con_reparos', 'accepted'];

/**
 * Reads the documents read model, table `dtes`, with the column contract
 * (organization_id uuid, sii_env text, tipo_dte int, rut_emisor text, folio bigint,
 * sii_status text, cedida boolean). When the table does not exist yet no document can exist,
 * so the usage is zero.
 */
export class SqlCafDocumentsProbe implements CafDocumentsProbe {
  constructor(private readonly db: DataSource) {}

  async usage(r: CafRange): Promise<{ accepted: number; ceded: number }> {
    const exists: { t: string | null }[] = await this.db.query(`SELECT to_regclass('dtes')::text AS t`);
    if (!exists[0]?.t) return { accepted: 0, ceded: 0 };
    const rows: { accepted: string; ceded: string }[] = await this.db.query(
      `SELECT count(*) FILTER (WHERE sii_status = ANY($7)) AS accepted,
              count(*) FILTER (WHERE cedida) AS ceded
         FROM dtes
        WHERE organization_id = $1 AND sii_env = $2 AND tipo_dte = $3 AND rut_emisor = $4
          AND folio BETWEEN $5 AND $6`,
      [r.organizationId, r.environment, r.tipoDte, r.rutEmisor, r.desde, r.hasta, ACCEPTED_STATUSES],
    );
    return { accepted: Number(rows[0].accepted), ceded: Number(rows[0].ceded) };
  }
}
