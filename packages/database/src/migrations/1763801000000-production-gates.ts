import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The organization gates of production (spec, Authentication item 7): `organizations.prod_enabled`
 * (already there) says the organization may issue in production at all; `companies.prod_tipos`
 * lists the document types the company is certified to issue in production. Both start closed:
 * an operator opens them (the api's seed command, --prod-enabled and --prod-tipos).
 */
export class ProductionGates1763801000000 implements MigrationInterface {
  name = 'ProductionGates1763801000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE companies ADD COLUMN prod_tipos integer[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE companies DROP COLUMN prod_tipos`);
  }
}
