import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Middleware } from 'koa';

/** One tool of the catalog as the server lists it; `inputSchema` is the REST body's JSON Schema. */
export interface McpToolDescriptor {
  name: string;
  title: string;
  description: string;
  /**
   * the OAuth scope the tool needs (spec, Authentication item 5); several separated by spaces:
   * any one of them is enough
   */
  scope: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

/** Who calls, from a verified access token. */
export interface McpCaller {
  connectionId: string;
  clientId: string;
  scopes: string[];
}

/** What a tool call answered: a JSON value, as the tool result or as a tool error. */
export interface McpToolOutcome {
  isError: boolean;
  body: Record<string, unknown>;
}

export interface McpServerOptions {
  /** the MCP endpoint URL, which is also the OAuth resource (token audience) */
  resource: string;
  /** the path it is mounted at, e.g. /mcp */
  path: string;
  /** `{auth_url}` issuers listed in the protected-resource metadata */
  authorizationServers: string[];
  scopesSupported: string[];
  serverInfo: { name: string; version: string };
  tools: McpToolDescriptor[];
  /** resolves a Bearer token; throws for a missing/expired/revoked/foreign one */
  verifyToken(token: string): Promise<McpCaller>;
  /**
   * runs a tool whose scope the caller holds (the caller checks nothing else here); the
   * implementation validates, applies caps, audits and runs or parks the call
   */
  callTool(name: string, args: unknown, caller: McpCaller): Promise<McpToolOutcome>;
  /** the answer to a tool the token lacks the scope of (catalog `forbidden`) */
  forbidden(name: string, scope: string, caller: McpCaller): Promise<McpToolOutcome>;
}

export interface McpHttp {
  middleware: Middleware;
  /** RFC 9728 document address, as given in WWW-Authenticate */
  resourceMetadataUrl: string;
}

function toResult(out: McpToolOutcome) {
  return {
    isError: out.isError,
    content: [{ type: 'text' as const, text: JSON.stringify(out.body) }],
    structuredContent: out.body,
  };
}

/** One SDK server per request (stateless Streamable HTTP): any api replica answers any call. */
function buildServer(opts: McpServerOptions, caller: McpCaller): Server {
  const server = new Server(opts.serverInfo, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: opts.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: `${t.description} (scope ${t.scope})`,
      inputSchema: t.inputSchema as { type: 'object' },
      annotations: { readOnlyHint: t.readOnly, title: t.title },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = opts.tools.find((t) => t.name === req.params.name);
    if (!tool) {
      return toResult({
        isError: true,
        body: { error: { code: 'not_found', message: `Unknown tool ${req.params.name}.` } },
      });
    }
    if (!tool.scope.split(' ').some((s) => caller.scopes.includes(s)))
      return toResult(await opts.forbidden(tool.name, tool.scope, caller));
    return toResult(await opts.callTool(tool.name, req.params.arguments ?? {}, caller));
  });
  return server;
}

/**
 * The remote MCP server over Streamable HTTP behind OAuth access tokens: the protected-resource
 * metadata (RFC 9728) at /.well-known/oauth-protected-resource[<path>], 401 with
 * `WWW-Authenticate: Bearer resource_metadata=…` without a valid token, then the SDK's server.
 */
export function createMcpHttp(opts: McpServerOptions): McpHttp {
  const origin = new URL(opts.resource).origin;
  const resourceMetadataUrl = `${origin}/.well-known/oauth-protected-resource${opts.path}`;
  const metadata = {
    resource: opts.resource,
    authorization_servers: opts.authorizationServers,
    scopes_supported: opts.scopesSupported,
    bearer_methods_supported: ['header'],
    resource_name: opts.serverInfo.name,
  };

  const unauthorized = (res: ServerResponse, error?: { code: string; description: string }) => {
    const params = [`resource_metadata="${resourceMetadataUrl}"`];
    if (error) params.unshift(`error="${error.code}"`, `error_description="${error.description}"`);
    res.statusCode = 401;
    res.setHeader('WWW-Authenticate', `Bearer ${params.join(', ')}`);
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify(
        error
          ? { error: error.code, error_description: error.description }
          : { error: { code: 'unauthorized', message: 'Send an OAuth access token as Bearer.' } },
      ),
    );
  };

  /** The caller of a request's Bearer token, or undefined once it was answered 401. */
  const callerOf = async (req: IncomingMessage, res: ServerResponse): Promise<McpCaller | undefined> => {
    const header = req.headers.authorization ?? '';
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m) {
      unauthorized(res);
      return undefined;
    }
    try {
      return await opts.verifyToken(m[1]);
    } catch (err) {
      unauthorized(res, { code: 'invalid_token', description: (err as Error).message });
      return undefined;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, caller: McpCaller, body: unknown) => {
    const server = buildServer(opts, caller);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const middleware: Middleware = async (ctx, next) => {
    if (
      ctx.path === resourceMetadataUrl.slice(origin.length) ||
      ctx.path === '/.well-known/oauth-protected-resource'
    ) {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = metadata;
      return;
    }
    if (ctx.path !== opts.path) return next();
    ctx.respond = false;
    // the token first: a caller without a valid one never gets its body read (up to 1 MiB)
    const caller = await callerOf(ctx.req, ctx.res);
    if (!caller) return;
    let body: unknown;
    if (ctx.method === 'POST') {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of ctx.req) {
        size += (c as Buffer).length;
        if (size > 1_048_576) {
          ctx.res.statusCode = 413;
          ctx.res.end();
          return;
        }
        chunks.push(c as Buffer);
      }
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        ctx.res.statusCode = 400;
        ctx.res.setHeader('Content-Type', 'application/json');
        ctx.res.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }),
        );
        return;
      }
    }
    await handle(ctx.req, ctx.res, caller, body);
  };

  return { middleware, resourceMetadataUrl };
}
