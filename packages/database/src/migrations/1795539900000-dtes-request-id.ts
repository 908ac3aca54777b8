import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The X-Request-Id of the POST that issued a document (issue 17, log correlation), written by
 * the api's INSERT of the document. The workers that write later messages for the document
 * (sii-uploader, sii-poller and its reconciliation) read it with the document, so the
 * `x-request-id` header they pass on survives their restarts and reaches every hop. NULL for
 * documents issued before this column, by other paths, or without a request id.
 * (Timestamp: the 13-digit JavaScript form TypeORM reads, 2026-11-24 17:05 UTC.)
 */
export class DtesRequestId1795539900000 implements MigrationInterface {
  name = 'DtesRequestId1795539900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dtes ADD COLUMN request_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dtes DROP COLUMN request_id`);
  }
}
