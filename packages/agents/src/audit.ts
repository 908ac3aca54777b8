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

/** One mcp_audit_log row as owners read it (GET /mcp-audit-log). */
export interface McpAuditRecord {
  id: string;
  connection_id: string;
  client_name: string | null;
  user_email: string;
  tool: string;
  arguments: unknown;
  outcome: 'ok' | 'error' | 'pending';
  error_code: string | null;
  created_at: string;
}

/**
 * The organization's MCP audit log, newest first, paged by the row id as a number (the cursor is
 * the last id seen: no entry skipped or repeated while new ones arrive). At most `limit` rows.
 */
export async function readMcpAudit(
  db: DataSource,
  organizationId: string,
  q: { limit: number; cursor: string | null; connectionId: string | null },
): Promise<{ data: McpAuditRecord[]; next_cursor: string | null }> {
  const rows: (Omit<McpAuditRecord, 'created_at' | 'id'> & { id: string; created_at: Date })[] =
    await db.query(
      `SELECT a.id::text AS id, a.connection_id, k.client_name, u.email AS user_email, a.tool, a.arguments,
            a.outcome, a.error_code, a.created_at
       FROM mcp_audit_log a JOIN mcp_connections k ON k.id = a.connection_id JOIN users u ON u.id = a.user_id
      WHERE a.organization_id = $1 AND ($2::bigint IS NULL OR a.id < $2)
        AND ($3::uuid IS NULL OR a.connection_id = $3)
      ORDER BY a.id DESC LIMIT $4`,
      [organizationId, q.cursor, q.connectionId, q.limit + 1],
    );
  const page = rows.slice(0, q.limit);
  return {
    data: page.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() })),
    next_cursor: rows.length > q.limit ? page[page.length - 1].id : null,
  };
}
