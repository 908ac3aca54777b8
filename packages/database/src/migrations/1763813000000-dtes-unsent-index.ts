import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The unsent backlog of a company and environment (issue 13, backpressure): documents accepted
 * by POST but not yet taken by the SII (no track id; `queued` or `signed`). POST /dtes and
 * /boletas count it (bounded, `LIMIT max + 1`) before taking a folio and answer 503
 * sii_unavailable above the bound (packages/emission/src/backlog-gate.ts). The partial index
 * holds only the documents in flight, so the count reads a few index pages.
 */
export class DtesUnsentIndex1763813000000 implements MigrationInterface {
  name = 'DtesUnsentIndex1763813000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX dtes_unsent_idx ON dtes (company_id, sii_env)
        WHERE track_id IS NULL AND sii_status IN ('queued', 'signed')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX dtes_unsent_idx`);
  }
}
