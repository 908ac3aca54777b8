import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const logger = createLogger('signer');
  const config = loadConfig();
  const health = await startHealthServer(config.healthPort);
  onShutdown(logger, [() => health.close()]);
  logger.info({ healthPort: health.port }, 'signer ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
