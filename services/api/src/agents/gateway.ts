import { backlogGateFor, HttpExchangeRateSource, UnconfiguredExchangeRateSource } from '@dte/emission';
import { createHmac } from 'node:crypto';
import type { Middleware } from 'koa';
import { createMcpHttp, type McpCaller, type McpToolOutcome } from '@dte/mcp-server';
import { createAuthorizationServer, OAUTH_SCOPES, type AuthorizationServer } from '@dte/oauth-server';
import type { ApiDeps, Principal } from '../context';
import { ApiError } from '@dte/error-catalog';
import { toEnvelope } from '../http/error-envelope';
import {
  auditMcpCall,
  enforceMcpCap,
  activeConnection,
  connectionPrincipal,
  createConnection,
  grantableCompanies,
  type McpConnection,
  getPendingAction,
  parkAction,
  pendingRecord,
  AGENT_TOOLS,
  agentTool,
  type AgentTool,
  type ToolEnv,
} from '@dte/agents';
import { accountStores } from '../auth/session';
import { currentDashboardUser } from './current-user';

export const MCP_PATH = '/mcp';

const gateways = new WeakMap<ApiDeps, AgentsGateway>();

/** The one gateway of an api instance (its OAuth provider is built once). */
export function agentsGatewayFor(deps: ApiDeps): AgentsGateway {
  let g = gateways.get(deps);
  if (!g) gateways.set(deps, (g = createAgentsGateway(deps)));
  return g;
}

/** The tool that reads a pending action back (its state and, once approved, its result). */
const PENDING_TOOL = 'consultar_accion_pendiente';

export interface AgentsGateway {
  middleware: Middleware;
  authServer: AuthorizationServer;
  /** runs a parked call once approved (pending-actions route) */
  runApproved(
    connectionId: string,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ ok: boolean; body: Record<string, unknown> }>;
  issuer: string;
  mcpUrl: string;
}

/**
 * Agents (issue 15): the OAuth authorization server (@dte/oauth-server) at `{auth_url}`/oauth and
 * the remote MCP server (@dte/mcp-server) at /mcp, on the api's HTTP server. Each tool call:
 * the connection of the token (user still a member), the scope, the same validation as REST, the
 * MCP cap, then either THE service function or — when irreversible — a pending action; every
 * call lands in mcp_audit_log.
 */
export function createAgentsGateway(deps: ApiDeps): AgentsGateway {
  const db = deps.dataSource;
  const now = () => (deps.clock ?? (() => new Date()))();
  const origin = new URL(deps.config.publicBaseUrl).origin;
  const issuer = deps.config.authUrl ?? origin;
  const mcpUrl = `${origin}${MCP_PATH}`;
  const rateUrl = deps.config.exchangeRateUrl ?? deps.config.siiBaseUrl;
  const rates = rateUrl
    ? new HttpExchangeRateSource(rateUrl, deps.config.siiTimeoutMs)
    : new UnconfiguredExchangeRateSource();
  const catalogUrl = `${deps.config.publicBaseUrl}/errors`;
  const capDefaults = {
    emit: deps.config.mcpCapEmitPerMinute,
    borrador: deps.config.mcpCapBorradorPerMinute,
    reenvio: deps.config.mcpCapReenvioPerMinute,
  };

  const authServer = createAuthorizationServer({
    issuer,
    mcpResource: mcpUrl,
    redis: deps.redis,
    cookieKeys: [
      createHmac('sha256', deps.config.sessionSecret ?? deps.config.masterKey)
        .update('oauth-cookies')
        .digest('base64url'),
    ],
    accessTokenTtlSec: deps.config.oauthAccessTokenTtlSec,
    ...(deps.config.oauthJwks ? { jwks: deps.config.oauthJwks } : {}),
    currentUser: (req) => currentDashboardUser(db, accountStores(deps).sessions, deps.config, req, now()),
    grantableCompanies: (userId) => grantableCompanies(db, userId),
    createConnection: (c) => createConnection(db, c),
    connectionActive: async (id) => (await activeConnection(db, id)) !== null,
    registration: {
      enabled: deps.config.oauthRegistrationEnabled,
      allowedRedirectHosts: deps.config.oauthRedirectHosts,
      perAddressPerHour: deps.config.oauthRegistrationsPerAddressPerHour,
      perHour: deps.config.oauthRegistrationsPerHour,
      unusedClientTtlSec: deps.config.oauthUnusedClientTtlSec,
    },
    loginUrl: (returnTo) => {
      // the dashboard's login sends the user back to `return_to`, a path of its own origin only
      const login = new URL(deps.config.dashboardLoginUrl ?? `${origin}/dashboard/ingresar`);
      const back = new URL(`${issuer}${returnTo}`);
      login.searchParams.set(
        'return_to',
        back.origin === login.origin ? back.pathname + back.search : back.href,
      );
      return login.href;
    },
  });

  const errorBody = (err: unknown) => toEnvelope(err, `mcp-${Date.now().toString(36)}`, catalogUrl).body;
  const backlog = backlogGateFor(deps);
  const env = (): ToolEnv => ({ deps, db, rates, now: now(), backlog });

  const connectionOf = async (caller: McpCaller): Promise<McpConnection> => {
    const c = await activeConnection(db, caller.connectionId);
    if (!c)
      throw new ApiError(
        'unauthorized',
        'This MCP connection was revoked or its user left the organization.',
      );
    return c;
  };

  const execute = async (tool: AgentTool, args: Record<string, unknown>, principal: Principal) => {
    try {
      return { ok: true, body: await tool.run(args, principal, env()) };
    } catch (err) {
      return { ok: false, body: errorBody(err) as Record<string, unknown> };
    }
  };

  const callTool = async (name: string, rawArgs: unknown, caller: McpCaller): Promise<McpToolOutcome> => {
    const conn = await connectionOf(caller);
    const args = (rawArgs && typeof rawArgs === 'object' ? rawArgs : {}) as Record<string, unknown>;
    const audit = (outcome: 'ok' | 'error' | 'pending', errorCode?: string) =>
      auditMcpCall(db, conn, { tool: name, args, outcome, errorCode });
    try {
      if (name === PENDING_TOOL) {
        // the caller's own actions only: its user and company, not the whole organization's
        const row = await getPendingAction(db, conn.organization_id, String(args.id ?? ''), {
          userId: conn.user_id,
          companyId: conn.company_id,
        });
        await audit('ok');
        return { isError: false, body: { pending_action: pendingRecord(row) } };
      }
      const tool = agentTool(name)!;
      tool.validate(args);
      if (tool.capType) {
        await enforceMcpCap(
          db,
          deps.redis,
          { connectionId: conn.id, companyId: conn.company_id, type: tool.capType, defaults: capDefaults },
          now(),
        );
      }
      if (tool.irreversible?.(args)) {
        const summary = (await tool.summary?.(args, connectionPrincipal(conn), env())) ?? name;
        const row = await parkAction(db, conn, name, args, summary);
        await audit('pending');
        return {
          isError: false,
          body: {
            pending_action: pendingRecord(row),
            message:
              'Esta acción es irreversible y espera la aprobación del usuario en el panel; consulta su estado con consultar_accion_pendiente.',
          },
        };
      }
      const out = await execute(tool, args, connectionPrincipal(conn));
      await audit(out.ok ? 'ok' : 'error', out.ok ? undefined : String(out.body.code));
      return { isError: !out.ok, body: out.body };
    } catch (err) {
      const body = errorBody(err) as Record<string, unknown>;
      await audit('error', String(body.code));
      return { isError: true, body };
    }
  };

  const forbidden = async (name: string, scope: string, caller: McpCaller): Promise<McpToolOutcome> => {
    const conn = await connectionOf(caller);
    const body = errorBody(
      new ApiError('forbidden', `This connection was not granted the scope ${scope}.`, {
        detail: { requiredScope: scope },
      }),
    ) as Record<string, unknown>;
    await auditMcpCall(db, conn, { tool: name, args: null, outcome: 'error', errorCode: 'forbidden' });
    return { isError: true, body };
  };

  const mcp = createMcpHttp({
    resource: mcpUrl,
    path: MCP_PATH,
    authorizationServers: [issuer],
    scopesSupported: [...OAUTH_SCOPES],
    serverInfo: { name: 'dte-service', version: '1.0.0' },
    tools: [
      ...AGENT_TOOLS.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        scope: t.scope,
        inputSchema: t.inputSchema,
        readOnly: t.readOnly,
      })),
      {
        name: PENDING_TOOL,
        title: 'Estado de una acción pendiente',
        description:
          'Estado de una acción irreversible que espera la aprobación del usuario, y su resultado una vez decidida',
        // whoever may park an action (dte:write, recepcion:write) or read its area may follow it
        scope: 'dte:read dte:write recepcion:read recepcion:write',
        inputSchema: {
          type: 'object',
          additionalProperties: false,
          required: ['id'],
          properties: { id: { type: 'string', format: 'uuid' } },
        },
        readOnly: true,
      },
    ],
    verifyToken: async (token) => {
      const t = await authServer.verifyAccessToken(token);
      if (!(await activeConnection(db, t.connectionId)))
        throw new Error('The connection of this token was revoked.');
      return { connectionId: t.connectionId, clientId: t.clientId, scopes: t.scopes };
    },
    callTool,
    forbidden,
  });

  const middleware: Middleware = async (ctx, next) => {
    await authServer.middleware(ctx, () => mcp.middleware(ctx, next));
  };

  return {
    middleware,
    authServer,
    issuer,
    mcpUrl,
    async runApproved(connectionId, name, args) {
      const conn = await activeConnection(db, connectionId);
      if (!conn) {
        return {
          ok: false,
          body: errorBody(
            new ApiError('unauthorized', 'The MCP connection of this action was revoked.'),
          ) as Record<string, unknown>,
        };
      }
      const tool = agentTool(name);
      if (!tool)
        return { ok: false, body: errorBody(new Error(`unknown tool ${name}`)) as Record<string, unknown> };
      const out = await execute(tool, args, connectionPrincipal(conn));
      await auditMcpCall(db, conn, {
        tool: name,
        args,
        outcome: out.ok ? 'ok' : 'error',
        errorCode: out.ok ? undefined : String(out.body.code),
      });
      return out;
    },
  };
}
