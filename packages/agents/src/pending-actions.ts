import { returnedRows } from '@dte/database';
import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import type { McpConnection } from './connections';

export type PendingStatus = 'pending' | 'approved' | 'rejected' | 'failed';

interface PendingRow {
  id: string;
  connection_id: string;
  organization_id: string;
  environment: string;
  tool: string;
  arguments: Record<string, unknown>;
  summary: string;
  status: PendingStatus;
  result: Record<string, unknown> | null;
  decided_by: string | null;
  decided_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, connection_id, organization_id, environment, tool, arguments, summary, status, result,
  decided_by, decided_at, created_at`;

/** The pending action as the tool and the dashboard show it. */
export function pendingRecord(r: PendingRow) {
  return {
    id: r.id,
    status: r.status,
    tool: r.tool,
    summary: r.summary,
    arguments: r.arguments,
    sii_env: r.environment,
    result: r.result,
    decided_at: r.decided_at ? new Date(r.decided_at).toISOString() : null,
    created_at: new Date(r.created_at).toISOString(),
  };
}

export async function parkAction(
  db: DataSource,
  c: McpConnection,
  tool: string,
  args: Record<string, unknown>,
  summary: string,
): Promise<PendingRow> {
  const rows: PendingRow[] = await db.query(
    `INSERT INTO pending_actions (connection_id, organization_id, environment, tool, arguments, summary)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [c.id, c.organization_id, c.environment, tool, JSON.stringify(args), summary],
  );
  return rows[0];
}

const notFound = (id: string) =>
  new ApiError('pending_action_not_found', 'No pending action with that id in this organization.', {
    detail: { id },
  });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One pending action of the organization; with `of`, only if it was asked over a connection of
 * that user and company (what an agent may read back: its own user's, never a colleague's).
 */
export async function getPendingAction(
  db: DataSource,
  organizationId: string,
  id: string,
  of?: { userId: string; companyId: string },
): Promise<PendingRow> {
  if (!UUID.test(id)) throw notFound(id);
  const rows: PendingRow[] = await db.query(
    `SELECT ${COLUMNS.replace(/(\w+)/g, 'p.$1')} FROM pending_actions p
      WHERE p.id = $1 AND p.organization_id = $2
        AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM mcp_connections k
              WHERE k.id = p.connection_id AND k.user_id = $3 AND k.company_id = $4))`,
    [id, organizationId, of?.userId ?? null, of?.companyId ?? null],
  );
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

export async function listPendingActions(
  db: DataSource,
  organizationId: string,
  status: PendingStatus | undefined,
) {
  const rows: PendingRow[] = await db.query(
    `SELECT ${COLUMNS} FROM pending_actions WHERE organization_id = $1 AND ($2::text IS NULL OR status = $2)
      ORDER BY created_at DESC LIMIT 100`,
    [organizationId, status ?? null],
  );
  return rows.map(pendingRecord);
}

/**
 * The user's decision. Only a `pending` action changes (the UPDATE … WHERE status = 'pending'
 * claims it once, so two clicks or two replicas cannot run it twice); a decided one is answered
 * as it stands. Approving runs the parked tool call with the connection it came from (`run`),
 * recording its answer (approved) or its error envelope (failed). The call carries its own
 * Idempotency-Key, so even a crash between the claim and the run cannot issue twice.
 */
export async function decidePendingAction(
  db: DataSource,
  organizationId: string,
  id: string,
  userId: string,
  decision: 'approve' | 'reject',
  run: (row: PendingRow) => Promise<{ ok: boolean; body: Record<string, unknown> }>,
) {
  const current = await getPendingAction(db, organizationId, id);
  if (current.status !== 'pending') return pendingRecord(current);
  const claimed = returnedRows<PendingRow>(
    await db.query(
      `UPDATE pending_actions SET status = $3, decided_by = $4, decided_at = now()
      WHERE id = $1 AND organization_id = $2 AND status = 'pending' RETURNING ${COLUMNS}`,
      [id, organizationId, decision === 'approve' ? 'approved' : 'rejected', userId],
    ),
  );
  const row = claimed[0];
  if (!row) return pendingRecord(await getPendingAction(db, organizationId, id));
  if (decision === 'reject') return pendingRecord(row);
  const out = await run(row);
  const done = returnedRows<PendingRow>(
    await db.query(`UPDATE pending_actions SET status = $2, result = $3 WHERE id = $1 RETURNING ${COLUMNS}`, [
      id,
      out.ok ? 'approved' : 'failed',
      JSON.stringify(out.body),
    ]),
  );
  return pendingRecord(done[0]);
}
