import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organization's own API request limit (issue 27): requests per API key (and per dashboard
 * user) in each RATE_LIMIT_WINDOW_SEC window. NULL keeps the api's default (RATE_LIMIT_MAX, 20 000
 * a minute: about 100 requests a second). Set by the operator (`npm run set-rate-limit -w @dte/accounts`); the
 * api reads it in the key's own lookup and shows it in RateLimit-Limit.
 */
export class OrganizationRateLimit1796000000000 implements MigrationInterface {
  name = 'OrganizationRateLimit1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE organizations ADD COLUMN rate_limit_max integer
         CONSTRAINT organizations_rate_limit_max_positive CHECK (rate_limit_max > 0)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizations DROP COLUMN rate_limit_max`);
  }
}
