import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Owners read their organization's MCP audit log newest first (GET /mcp-audit-log): an index on
 * (organization_id, id DESC) so the page and its cursor never scan other tenants' rows.
 */
export class McpAuditLogOrg1796100000000 implements MigrationInterface {
  name = 'McpAuditLogOrg1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX mcp_audit_log_org_idx ON mcp_audit_log (organization_id, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS mcp_audit_log_org_idx');
  }
}
