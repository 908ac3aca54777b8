import type { DataSource } from 'typeorm';

/**
 * What DELETE /caf/:id needs to know about the documents issued with a CAF's folios. The
 * documents belong to the emission pipeline (table `dtes`, issue 6, which records each
 * document's `caf_id`); cessions are in `dte_cessions`.
 */
export interface CafDocumentsProbe {
  usage(cafId: string): Promise<{ accepted: number; ceded: number }>;
}

/** sii_status values that mean the SII accepted the document (spec, sii_status vocabulary). */
export const ACCEPTED_STATUSES = ['EPR', 'RPR', 'aceptado_con_reparos', 'accepted'];

export class SqlCafDocumentsProbe implements CafDocumentsProbe {
  constructor(private readonly db: DataSource) {}

  async usage(cafId: string): Promise<{ accepted: number; ceded: number }> {
    const rows: { accepted: string; ceded: string }[] = await this.db.query(
      `SELECT count(*) FILTER (WHERE d.sii_status = ANY($2)) AS accepted,
              count(c.dte_id) AS ceded
         FROM dtes d LEFT JOIN dte_cessions c ON c.dte_id = d.id
        WHERE d.caf_id = $1`,
      [cafId, ACCEPTED_STATUSES],
    );
    return { accepted: Number(rows[0].accepted), ceded: Number(rows[0].ceded) };
  }
}
