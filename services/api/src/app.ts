import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { dashboard } from '@dte/dashboard';
import type { ApiDeps, RouteDef } from './context';
import { errorEnvelope } from './http/error-envelope';
import { unsupportedMethods } from './http/methods';
import { healthProbes } from './http/health';
import { clientAddress } from './http/client-address';
import { startKnownKeysRefresh } from './auth/known-keys';
import { httpMetrics } from './http/metrics';
import { requestId } from './http/request-id';
import { securityHeaders } from './http/security-headers';
import { buildOpenApi } from './openapi';
import { branchRoutes } from './routes/branches';
import { cafRoutes } from './routes/caf';
import { certificateRoutes } from './routes/certificates';
import { metaRoutes } from './routes/meta';
import { createRouteKit } from './routes/route-kit';
import { dteDeliveryRoutes } from './routes/dte-delivery';
import { dtePrintRoutes } from './routes/dte-print';
import { dteRoutes } from './routes/dtes';
import { dteHelperRoutes } from './routes/dte-helpers';
import { webhookRoutes } from './routes/webhooks';
import { recepcionRoutes } from './routes/recepcion';
import { rcvRoutes } from './routes/rcv';
import { accountRoutes } from './routes/accounts';
import { organizationRoutes } from './routes/organizations';
import { accountRecoveryRoutes } from './routes/account-recovery';
import { apiKeyAdminRoutes } from './routes/api-key-admin';
import { catalogRoutes } from './routes/catalogs';
import { pendingActionRoutes } from './routes/pending-actions';
import { mcpConnectionRoutes } from './routes/mcp-connections';
import { agentsGatewayFor } from './agents/gateway';
import { boletaRoutes } from './routes/boletas';
import { bheRoutes } from './routes/bhe';
import { billingRoutes } from './routes/billing';
import { BASE_PATH } from '@dte/http-contract';

export { BASE_PATH };

/** Every route of the api core, in one table (the OpenAPI document is built from it). */
export function apiRoutes(deps: ApiDeps): RouteDef[] {
  const kit = createRouteKit(deps);
  const routes: RouteDef[] = [
    ...certificateRoutes(deps, kit.now),
    ...cafRoutes(deps, kit.now),
    ...branchRoutes(deps),
    ...webhookRoutes(deps, kit.now),
    ...dteHelperRoutes(deps, kit.now),
    ...dtePrintRoutes(deps, kit.now),
    ...dteDeliveryRoutes(deps),
    ...dteRoutes(deps, kit.now),
    ...recepcionRoutes(deps, kit.now),
    ...rcvRoutes(deps, kit.now),
    ...accountRoutes(deps, kit.now),
    ...accountRecoveryRoutes(deps, kit.now),
    ...organizationRoutes(deps, kit.now),
    ...apiKeyAdminRoutes(deps, kit.now),
    ...catalogRoutes(deps),
    ...pendingActionRoutes(deps),
    ...mcpConnectionRoutes(deps),
    ...boletaRoutes(deps, kit.now),
    ...bheRoutes(deps, kit.now),
    ...billingRoutes(deps, kit.now),
  ];
  let doc: unknown;
  const openApi = () =>
    (doc ??= buildOpenApi(all, { serverUrl: deps.config.publicBaseUrl, catalogUrl: catalogUrl(deps) }));
  const all: RouteDef[] = [...metaRoutes(openApi), ...routes];
  return all;
}

export function catalogUrl(deps: Pick<ApiDeps, 'config'>): string {
  return `${deps.config.publicBaseUrl}/errors`;
}

export interface ApiApp {
  app: Koa;
  router: Router;
  routes: RouteDef[];
}

/** Builds the Koa app: request id, error envelope, then the /api/v1 router. */
export function createApp(deps: ApiDeps): ApiApp {
  const app = new Koa();
  app.proxy = false;
  // errors are rendered by the envelope middleware; Koa's own logging would print them twice
  app.silent = true;
  const kit = createRouteKit(deps);
  const routes = apiRoutes(deps);
  const router = new Router({ prefix: BASE_PATH });
  for (const def of routes) {
    router[def.method](def.path, ...kit.chain(def), (ctx) => def.handler(ctx));
  }
  // ── Emission routes (/dtes, issue 6) mount here, with the same building blocks. ──
  deps.mountExtraRoutes?.(router, kit);

  app.use(
    securityHeaders({
      https: deps.config.publicBaseUrl.startsWith('https:'),
      hstsMaxAgeSec: deps.config.hstsMaxAgeSec,
    }),
  );
  app.use(httpMetrics());
  app.use(clientAddress(deps.config.trustedProxies)); // ctx.ip: X-Forwarded-For only from TRUSTED_PROXIES
  app.use(requestId());
  app.use(unsupportedMethods()); // TRACE and other methods no route serves: 405 with Allow
  app.use(healthProbes(deps));
  // OAuth server ({auth_url}/oauth, metadata) and the MCP server (/mcp), issue 15
  app.use(agentsGatewayFor(deps).middleware);
  app.use(errorEnvelope({ catalogUrl: catalogUrl(deps), logger: deps.logger }));
  app.use(dashboard()); // the web UI under /dashboard (@dte/dashboard), a client of the routes below
  app.use(router.routes());
  return { app, router, routes };
}

export interface RunningApi {
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the app on `port` (0 = a free port) and resolves once it listens. A client must send its
 * headers within API_HEADERS_TIMEOUT_MS and its whole request within API_REQUEST_TIMEOUT_MS (then
 * 408 and the connection closed, checked every second): a body that never ends holds a socket
 * that long, not Node's default 300 s.
 */
export async function startApi(deps: ApiDeps, opts: { port: number; host?: string }): Promise<RunningApi> {
  const { app } = createApp(deps);
  const knownKeys = startKnownKeysRefresh(
    deps.dataSource,
    deps.redis,
    deps.logger,
    deps.config.knownKeysRefreshMs,
  );
  const { apiHeadersTimeoutMs, apiRequestTimeoutMs } = deps.config;
  const server = http.createServer(
    {
      headersTimeout: Math.min(apiHeadersTimeoutMs, apiRequestTimeoutMs),
      requestTimeout: apiRequestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, apiHeadersTimeoutMs),
    },
    app.callback(),
  );
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host}:${port}${BASE_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        knownKeys.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
