import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One-use tokens of a dashboard user (issue 28): `invitation` (a user the seed command or an
 * operator made without a password sets theirs with it, instead of whoever signs up first with
 * that address) and `password_reset` (mailed on request). Only the SHA-256 of the token is kept;
 * redeeming sets `used_at` in the same statement that checks it (one use, even when raced).
 * (Timestamp range 17962…: the trust helper's migrations of issue 28.)
 */
export class UserTokens1796200000000 implements MigrationInterface {
  name = 'UserTokens1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE user_tokens (
        token_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('invitation', 'password_reset')),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(`CREATE INDEX user_tokens_user_idx ON user_tokens (user_id, purpose, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE user_tokens`);
  }
}
