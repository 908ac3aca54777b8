import { billingSettings } from '@dte/billing';
import { ConfigError, createLogger, onShutdown } from '@dte/service-runtime';
import { isProduction, loadConfig, riskyDefaults } from './config';
import { openApiDatabase, warmApiPool } from './db/data-source';
import { productionDeps } from './deps';
import { startApi } from './app';
import { compileHttpSchemas } from '@dte/http-contract';
import { startAutoStamping } from '@dte/folios';
import { startApiPipeline } from '@dte/pipeline';
import { startReceptorDelivery } from '@dte/emission';
import { reportBillingMetrics, startBillingNotices } from './routes/billing';

async function main(): Promise<void> {
  const logger = createLogger('api');
  const config = loadConfig();
  // the plan catalog and default allowances (BILLING_*): a bad value stops the start, not an emission
  billingSettings();
  const risky = riskyDefaults(config);
  if (risky.length > 0 && isProduction()) {
    // a production process never runs on development fallbacks (issue 28)
    throw new ConfigError(risky.map((r) => `${r}; refused with NODE_ENV=production`));
  }
  for (const r of risky) logger.warn(`${r} (development only: refused with NODE_ENV=production)`);
  const dataSource = await openApiDatabase({ url: config.databaseUrl, schema: config.databaseSchema });
  // every pooled connection open and its catalog caches loaded before the api listens (issue 27)
  await warmApiPool(dataSource);
  // every body schema compiled before the api listens: the first POST of each kind does not pay it
  const compiling = performance.now();
  const schemas = compileHttpSchemas();
  logger.info({ schemas, ms: Math.round(performance.now() - compiling) }, 'request schemas compiled');
  const deps = productionDeps(config, dataSource, logger);
  const api = await startApi(deps, { port: config.port, host: config.host });
  const sweep = startAutoStamping(deps);
  const delivery = startReceptorDelivery(deps);
  const notices = startBillingNotices(deps);
  const stopBillingMetrics = reportBillingMetrics(deps);
  const pipeline = await startApiPipeline(dataSource, logger);
  deps.readiness = pipeline.checks;
  onShutdown(logger, [
    async () => sweep.stop(),
    async () => delivery.stop(),
    async () => notices.stop(),
    async () => stopBillingMetrics(),
    () => api.close(),
    () => pipeline.stop(),
    () => deps.redis.quit().then(() => undefined),
    () => dataSource.destroy(),
  ]);
  logger.info({ url: api.url }, 'api ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
