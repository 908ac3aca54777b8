import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The note rules (packages/emission/src/note-rules.ts) look for our documents that reference a
 * given document (previous notes, invoices of a guía) by containment on the stored body's
 * `references`; this GIN index answers that without reading every document of the company.
 */
export class DteReferencesIndex1763803000000 implements MigrationInterface {
  name = 'DteReferencesIndex1763803000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX dtes_input_references_idx ON dtes USING gin ((input->'references') jsonb_path_ops)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS dtes_input_references_idx');
  }
}
