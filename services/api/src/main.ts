import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { loadConfig } from './config';

// Placeholder until the API core lands: the process answers /healthz on API_PORT.
async function main(): Promise<void> {
  const logger = createLogger('api');
  const config = loadConfig();
  const health = await startHealthServer(config.port);
  onShutdown(logger, [() => health.close()]);
  logger.info({ port: health.port }, 'api ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
