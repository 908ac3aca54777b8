import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import type { ApiDeps, RouteDef } from './context';
import { errorEnvelope } from './http/error-envelope';
import { healthProbes } from './http/health';
import { httpMetrics } from './http/metrics';
import { requestId } from './http/request-id';
import { buildOpenApi } from './openapi';
import { branchRoutes } from './routes/branches';
import { cafRoutes } from './routes/caf';
import { certificateRoutes } from './routes/certificates';
import { metaRoutes } from './routes/meta';
import { createRouteKit } from './routes/route-kit';
import { dteRoutes } from './routes/dtes';
import { webhookRoutes } from './routes/webhooks';

export const BASE_PATH = '/api/v1';

/** Every route of the api core, in one table (the OpenAPI document is built from it). */
export function apiRoutes(deps: ApiDeps): RouteDef[] {
  const kit = createRouteKit(deps);
  const routes: RouteDef[] = [
    ...certificateRoutes(deps, kit.now),
    ...cafRoutes(deps, kit.now),
    ...branchRoutes(deps),
    ...webhookRoutes(deps, kit.now),
    ...dteRoutes(deps, kit.now),
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

  app.use(httpMetrics());
  app.use(requestId());
  app.use(healthProbes(deps));
  app.use(errorEnvelope({ catalogUrl: catalogUrl(deps), logger: deps.logger }));
  app.use(router.routes());
  return { app, router, routes };
}

export interface RunningApi {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Starts the app on `port` (0 = a free port) and resolves once it listens. */
export async function startApi(deps: ApiDeps, opts: { port: number; host?: string }): Promise<RunningApi> {
  const { app } = createApp(deps);
  const server = http.createServer(app.callback());
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
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
