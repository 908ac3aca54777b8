import { createLogger, onShutdown } from '@dte/service-runtime';
import { loadConfig } from './config';
import { openApiDatabase, warmApiPool } from './db/data-source';
import { productionDeps } from './deps';
import { startApi } from './app';
import { startAutoStamping } from './caf/auto-stamping-loop';
import { startApiPipeline } from './projector/pipeline';
import { startReceptorDelivery } from './dtes/receptor-delivery';

async function main(): Promise<void> {
  const logger = createLogger('api');
  const config = loadConfig();
  if (!config.siiCafKeys) {
    logger.warn('SII_CAF_KEYS_FILE is not set: CAF signatures (FRMA) are not verified; set it in production');
  }
  const dataSource = await openApiDatabase({ url: config.databaseUrl, schema: config.databaseSchema });
  // every pooled connection open and its catalog caches loaded before the api listens (issue 27)
  await warmApiPool(dataSource);
  const deps = productionDeps(config, dataSource, logger);
  const api = await startApi(deps, { port: config.port, host: config.host });
  const sweep = startAutoStamping(deps);
  const delivery = startReceptorDelivery(deps);
  const pipeline = await startApiPipeline(dataSource, logger);
  deps.readiness = pipeline.checks;
  onShutdown(logger, [
    async () => sweep.stop(),
    async () => delivery.stop(),
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
