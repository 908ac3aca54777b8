import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The references index holds only the documents that carry references (issue 27).
 *
 * GIN indexes a NULL too: every document without references (most facturas) put an entry for it
 * in the index's pending list on its insert and on each of its ~5 status updates (an update that
 * is not HOT writes every index), and the list's merge, every few megabytes, ran inside whichever
 * statement filled it: a POST's or a worker's. The note rules' containment query
 * (`input->'references' @> …`, packages/emission/src/note-rules.ts) implies the predicate, so the
 * planner still uses the index.
 */
export class ReferencesIndexPartial1796900000000 implements MigrationInterface {
  name = 'ReferencesIndexPartial1796900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS dtes_input_references_idx');
    await q.query(
      `CREATE INDEX dtes_input_references_idx ON dtes USING gin ((input->'references') jsonb_path_ops)
        WHERE (input->'references') IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS dtes_input_references_idx');
    await q.query(
      `CREATE INDEX dtes_input_references_idx ON dtes USING gin ((input->'references') jsonb_path_ops)`,
    );
  }
}
