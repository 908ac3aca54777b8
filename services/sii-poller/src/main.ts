import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const logger = createLogger('sii-poller');
  const config = loadConfig();
  const health = await startHealthServer(config.healthPort);
  onShutdown(logger, [() => health.close()]);
  logger.info({ healthPort: health.port }, 'sii-poller ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
