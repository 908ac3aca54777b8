import type { DataSource } from 'typeorm';
import type { McpConnection } from './connections';

/** One row of mcp_audit_log per MCP tool call, whatever its outcome. */
export async function auditMcpCall(
  db: DataSource,
  c: Pick<McpConnection, 'id' | 'organization_id' | 'user_id' | 'client_id'>,
  call: { tool: string; args: unknown; outcome: 'ok' | 'error' | 'pending'; errorCode?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO mcp_audit_log (connection_id, organization_id, user_id, client_id, tool, arguments, outcome, error_code)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      c.id,
      c.organization_id,
      c.user_id,
      c.client_id,
      call.tool,
      JSON.stringify(call.args ?? null),
      call.outcome,
      call.errorCode ?? null,
    ],
  );
}
