import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agents (issue 15): the remote MCP server behind OAuth 2.1.
 *
 * - `mcp_connections`: what one consent granted. The OAuth subject (accountId) of the tokens is
 *   the connection id, so every access token is bound to one user, organization, company and
 *   environment (cert/prod); the per-connection MCP caps count under it.
 * - `pending_actions`: an irreversible tool call waiting for the user's approval in the dashboard
 *   (pending → approved/rejected; an approved one records what running it gave).
 * - `mcp_audit_log`: every MCP tool call, its outcome and error code.
 * - `companies.mcp_rate_limits`: the company's per-minute MCP caps per action type
 *   (`{"emit": 30, "borrador": 60, "reenvio": 10}`), null = the service defaults.
 */
export class AgentsOauthMcp1763810000000 implements MigrationInterface {
  name = 'AgentsOauthMcp1763810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        company_id uuid NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        environment text NOT NULL CHECK (environment IN ('cert', 'prod')),
        client_id text NOT NULL,
        client_name text,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX mcp_connections_user_idx ON mcp_connections (user_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE pending_actions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        environment text NOT NULL,
        tool text NOT NULL,
        arguments jsonb NOT NULL,
        summary text NOT NULL,
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'approved', 'rejected', 'failed')),
        result jsonb,
        decided_by uuid REFERENCES users(id) ON DELETE SET NULL,
        decided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX pending_actions_org_idx ON pending_actions (organization_id, status, created_at DESC)`,
    );
    await q.query(`
      CREATE TABLE mcp_audit_log (
        id bigserial PRIMARY KEY,
        connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        user_id uuid NOT NULL,
        client_id text NOT NULL,
        tool text NOT NULL,
        arguments jsonb,
        outcome text NOT NULL CHECK (outcome IN ('ok', 'error', 'pending')),
        error_code text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX mcp_audit_log_conn_idx ON mcp_audit_log (connection_id, created_at)`);
    await q.query(`ALTER TABLE companies ADD COLUMN mcp_rate_limits jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE companies DROP COLUMN IF EXISTS mcp_rate_limits');
    await q.query('DROP TABLE IF EXISTS mcp_audit_log');
    await q.query('DROP TABLE IF EXISTS pending_actions');
    await q.query('DROP TABLE IF EXISTS mcp_connections');
  }
}
