import type { Context } from 'koa';
import { agentsGatewayFor } from '../agents/gateway';
import {
  decidePendingAction,
  getPendingAction,
  listPendingActions,
  pendingRecord,
  type PendingStatus,
} from '@dte/agents';
import type { ApiDeps, Principal, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { principalOf } from './route-kit';

const STATUSES: PendingStatus[] = ['pending', 'approved', 'rejected', 'failed'];

/** Pending actions are decided by a person in the dashboard, never with an API key. */
function sessionUser(ctx: Context): Principal & { userId: string } {
  const p = principalOf(ctx);
  if (p.kind !== 'session') {
    throw new ApiError(
      'forbidden',
      'Pending actions are approved or rejected by a user in the dashboard session.',
      {
        withoutNextAction: true,
      },
    );
  }
  return { ...p, userId: p.actorId.replace(/^user:/, '') };
}

/**
 * The approval of irreversible MCP actions (issue 15): the dashboard lists the organization's
 * pending actions and approves or rejects one. An owner or admin decides any; a member only
 * those of their own MCP connections.
 */
export function pendingActionRoutes(deps: ApiDeps): RouteDef[] {
  const db = deps.dataSource;
  const mayDecide = async (p: Principal & { userId: string }, connectionId: string) => {
    if (p.role === 'owner' || p.role === 'admin') return;
    const rows: { user_id: string }[] = await db.query('SELECT user_id FROM mcp_connections WHERE id = $1', [
      connectionId,
    ]);
    if (rows[0]?.user_id !== p.userId) {
      throw new ApiError(
        'forbidden',
        'Only an owner, an admin or the user who connected the agent can decide this action.',
        {
          detail: { role: p.role },
          withoutNextAction: true,
        },
      );
    }
  };
  const decide = (decision: 'approve' | 'reject') => async (ctx: Context) => {
    const p = sessionUser(ctx);
    const id = String(ctx.params.id);
    const row = await getPendingAction(db, p.organizationId, id);
    await mayDecide(p, row.connection_id);
    ctx.body = {
      pending_action: await decidePendingAction(db, p.organizationId, id, p.userId, decision, (r) =>
        agentsGatewayFor(deps).runApproved(r.connection_id, r.tool, r.arguments),
      ),
    };
  };
  return [
    {
      method: 'get',
      path: '/pending-actions',
      operationId: 'listPendingActions',
      summary: "The organization's MCP actions waiting for (or given) a user's approval",
      tag: 'agents',
      auth: 'bearer_or_session',
      query: { status: { description: 'filter by state', schema: { type: 'string', enum: STATUSES } } },
      responses: { 200: { description: '{pending_actions: [...]}' } },
      errors: [],
      handler: async (ctx) => {
        const p = sessionUser(ctx);
        const status =
          typeof ctx.query.status === 'string' && (STATUSES as string[]).includes(ctx.query.status)
            ? (ctx.query.status as PendingStatus)
            : undefined;
        ctx.body = { pending_actions: await listPendingActions(db, p.organizationId, status) };
      },
    },
    {
      method: 'get',
      path: '/pending-actions/:id',
      operationId: 'getPendingAction',
      summary: 'One pending action with its state and, once decided, its result',
      tag: 'agents',
      auth: 'bearer_or_session',
      responses: { 200: { description: '{pending_action}' } },
      errors: ['pending_action_not_found'],
      handler: async (ctx) => {
        const p = sessionUser(ctx);
        ctx.body = {
          pending_action: pendingRecord(await getPendingAction(db, p.organizationId, String(ctx.params.id))),
        };
      },
    },
    {
      method: 'post',
      path: '/pending-actions/:id/approve',
      operationId: 'approvePendingAction',
      summary: 'Approve a pending MCP action: it runs now with the connection that asked for it',
      tag: 'agents',
      auth: 'bearer_or_session',
      responses: {
        200: { description: '{pending_action} approved (with result) or failed (with the error)' },
      },
      errors: ['pending_action_not_found'],
      handler: decide('approve'),
    },
    {
      method: 'post',
      path: '/pending-actions/:id/reject',
      operationId: 'rejectPendingAction',
      summary: 'Reject a pending MCP action: nothing is done',
      tag: 'agents',
      auth: 'bearer_or_session',
      responses: { 200: { description: '{pending_action} rejected' } },
      errors: ['pending_action_not_found'],
      handler: decide('reject'),
    },
  ];
}
