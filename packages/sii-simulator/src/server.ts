/**
 * The simulator's HTTP server. One process serves both environments under two base paths, so
 * a client switches to the real SII by changing base URLs only:
 *
 *   http://host:port/cert  ≙ https://maullin.sii.cl  and  https://ws2.sii.cl
 *   http://host:port/prod  ≙ https://palena.sii.cl   and  https://ws1.sii.cl
 *
 * (the path after the base is the SII's own: /DTEWS/CrSeed.jws, /cgi_dte/UPL/DTEUpload,
 * /WSREGISTRORECLAMODTECERT/registroreclamodteservice, …).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import { Router } from '@koa/router';
import { createTestSiiKey, type SiiKey } from './engine';
import { BodyTooLarge } from './http';
import { withDefaults, type SimulatorOptions } from './options';
import { crSeed, getTokenFromSeed } from './routes/auth';
import { adminRoutes } from './routes/admin';
import { purchaseCessionRoutes } from './routes/purchase-cessions';
import { boletaRestRoutes } from './routes/boleta-rest';
import { bheRoutes } from './routes/bhe';
import { exchangeRate } from './routes/exchange';
import { requestFolios } from './routes/folios';
import { queryEstDte, queryEstUp } from './routes/query';
import { rcv, RCV_FACADE_PATH, RCV_OPERATIONS } from './routes/rcv';
import { registerService } from './routes/register';
import { dteUpload } from './routes/upload';
import { serveWsdl, WSDL_SERVICES } from './routes/wsdl';
import { taxpayerRoutes } from './routes/taxpayers';
import type { Sim } from './sim';
import { keepStateIn, loadState } from './snapshot';
import { SimulatorState } from './state';
import { REGISTER_PATH, SII_ENVS, SII_IDK, type SiiEnv } from './types';

export interface RunningSimulator {
  /** http://host:port (no trailing slash); environments live at `${url}/cert` and `${url}/prod` */
  url: string;
  port: number;
  state: SimulatorState;
  siiKeys: Record<SiiEnv, SiiKey>;
  options: SimulatorOptions;
  close(): Promise<void>;
}

/** `changed`: called after every request (any of them may change the state), for the state file */
export function createApp(sim: Sim, changed?: () => void): Koa {
  const app = new Koa();
  const router = new Router();
  for (const env of SII_ENVS) {
    const base = `/${env}`;
    for (const service of WSDL_SERVICES)
      router.get(`${base}/DTEWS/${service}.jws`, (ctx) => {
        if (Object.keys(ctx.query).some((k) => k.toLowerCase() === 'wsdl')) serveWsdl(env, service, ctx);
      });
    router.post(`${base}/DTEWS/CrSeed.jws`, (ctx) => crSeed(sim, env, ctx));
    router.post(`${base}/DTEWS/GetTokenFromSeed.jws`, (ctx) => getTokenFromSeed(sim, env, ctx));
    router.post(`${base}/DTEWS/QueryEstUp.jws`, (ctx) => queryEstUp(sim, env, ctx));
    router.post(`${base}/DTEWS/QueryEstDte.jws`, (ctx) => queryEstDte(sim, env, ctx));
    router.post(`${base}/cgi_dte/UPL/DTEUpload`, (ctx) => dteUpload(sim, env, ctx));
    router.post(`${base}${REGISTER_PATH[env]}`, (ctx) => registerService(sim, env, ctx));
    for (const op of RCV_OPERATIONS)
      router.post(`${base}${RCV_FACADE_PATH}/${op}`, (ctx) => rcv(sim, env, ctx, op));
    router.post(`${base}/folios`, (ctx) => requestFolios(sim, env, ctx));
  }
  router.get('/tipo-cambio/:moneda/:fecha', (ctx) =>
    exchangeRate(sim, ctx, ctx.params.moneda, ctx.params.fecha),
  );
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  boletaRestRoutes(sim, router);
  bheRoutes(sim, router);
  adminRoutes(sim, router);
  purchaseCessionRoutes(sim, router);
  taxpayerRoutes(sim, router);

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        ctx.status = 413;
        ctx.body = { error: 'body_too_large', message: err.message };
        return;
      }
      ctx.status = 500;
      ctx.type = 'text/plain';
      ctx.body = `Error 500: ${(err as Error).message}`;
      ctx.app.emit('error', err, ctx);
    } finally {
      changed?.();
    }
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.silent = true;
  return app;
}

export async function startSiiSimulator(partial: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  const options = withDefaults(partial);
  const siiKeys = {} as Record<SiiEnv, SiiKey>;
  for (const env of SII_ENVS) {
    const given = options.siiKeys[env];
    if (given && Number(given.idk) !== SII_IDK[env])
      throw new Error(`the ${env} SII key must have IDK ${SII_IDK[env]}, got ${given.idk}`);
    siiKeys[env] = given ?? createTestSiiKey(SII_IDK[env]);
  }
  const state = new SimulatorState(options.clock);
  // a saved state comes back whole; the start-up triggers arm only a fresh one (not again at each restart)
  const restored = options.stateFile ? loadState(state, options.stateFile) : false;
  if (!restored) options.triggers.forEach((t) => state.triggers.add(t));
  options.exchangeRates.forEach((r) => state.rates.set(`${r.moneda}|${r.fecha}`, r));
  const saver = options.stateFile ? keepStateIn(state, options.stateFile) : undefined;
  const sim: Sim = { state, options, siiKeys };
  const app = createApp(sim, saver?.touch);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(options.port, options.host, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host}:${port}`,
    port,
    state,
    siiKeys,
    options,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => {
          saver?.stop();
          if (err) reject(err);
          else resolve();
        });
      }),
  };
}
