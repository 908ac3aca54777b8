import type { Context } from 'koa';
import { readMcpAudit, listConnections, revokeConnection } from '@dte/agents';
import type { ApiDeps, RouteDef } from '../context';
import { isUuid } from '@dte/database';
import { ApiError } from '@dte/error-catalog';
import { principalOf } from './route-kit';

const seesAll = (ctx: Context) => {
  const p = principalOf(ctx);
  return p.role === 'owner' || p.role === 'admin';
};
const userOf = (ctx: Context) => principalOf(ctx).actorId.replace(/^user:/, '');

/**
 * Agents' connections for the people of the organization (issue 28): list the MCP connections
 * (an owner or admin every user's, a member their own), revoke one (its tokens stop at once),
 * and read the MCP audit log (owner or admin). Dashboard session only: no API key manages agents.
 */
export function mcpConnectionRoutes(deps: ApiDeps): RouteDef[] {
  const db = deps.dataSource;
  return [
    {
      method: 'get',
      path: '/mcp-connections',
      operationId: 'listMcpConnections',
      summary: "The organization's agents connected over OAuth (a member sees only their own)",
      tag: 'agents',
      auth: 'session',
      responses: { 200: { description: 'connections', schema: 'mcp-connection-list.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        ctx.body = { data: await listConnections(db, p.organizationId, seesAll(ctx) ? null : userOf(ctx)) };
      },
    },
    {
      method: 'delete',
      path: '/mcp-connections/:id',
      operationId: 'revokeMcpConnection',
      summary:
        'Disconnect an agent: its access tokens stop at once and its refresh token is refused; other agents stay connected',
      tag: 'agents',
      auth: 'session',
      responses: { 204: { description: 'revoked (also when it already was)' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const id = String(ctx.params.id);
        const done =
          isUuid(id) && (await revokeConnection(db, p.organizationId, id, seesAll(ctx) ? null : userOf(ctx)));
        if (!done) throw new ApiError('not_found', 'No such agent connection in this organization.');
        ctx.status = 204;
      },
    },
    {
      method: 'get',
      path: '/mcp-audit-log',
      operationId: 'readMcpAuditLog',
      summary: "Every MCP tool call of the organization's agents, newest first",
      tag: 'agents',
      auth: 'session',
      roles: ['owner', 'admin'],
      query: {
        limit: { description: '1-100, default 50', schema: { type: 'integer', minimum: 1, maximum: 100 } },
        cursor: {
          description: 'next_cursor of the previous page',
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
        connection_id: { description: 'one connection only', schema: { type: 'string', format: 'uuid' } },
      },
      responses: { 200: { description: 'audit entries', schema: 'mcp-audit-log.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        const q = ctx.query;
        const issues: { path: string; message: string }[] = [];
        const limit = q.limit === undefined ? 50 : Number(q.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100)
          issues.push({ path: '/limit', message: 'should be an integer from 1 to 100' });
        const cursor = typeof q.cursor === 'string' ? q.cursor : null;
        if (q.cursor !== undefined && !(cursor && /^[0-9]{1,18}$/.test(cursor)))
          issues.push({ path: '/cursor', message: 'should be a next_cursor value' });
        const connectionId = typeof q.connection_id === 'string' ? q.connection_id : null;
        if (q.connection_id !== undefined && !(connectionId && isUuid(connectionId)))
          issues.push({ path: '/connection_id', message: 'should be a uuid' });
        if (issues.length) throw new ApiError('validation_failed', 'The query is not valid.', { issues });
        ctx.body = await readMcpAudit(db, principalOf(ctx).organizationId, { limit, cursor, connectionId });
      },
    },
  ];
}
