import { createLogger, onShutdown } from '@dte/service-runtime';
import { loadConfig } from './config';
import { openApiDatabase } from './db/data-source';
import { productionDeps } from './deps';
import { startApi } from './app';

async function main(): Promise<void> {
  const logger = createLogger('api');
  const config = loadConfig();
  const dataSource = await openApiDatabase({ url: config.databaseUrl, schema: config.databaseSchema });
  const deps = productionDeps(config, dataSource, logger);
  const api = await startApi(deps, { port: config.port, host: config.host });
  onShutdown(logger, [
    () => api.close(),
    () => deps.redis.quit().then(() => undefined),
    () => dataSource.destroy(),
  ]);
  logger.info({ url: api.url }, 'api ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
