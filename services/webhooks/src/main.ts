import { createLogger, onShutdown } from '@dte/service-runtime';
import { loadConfig } from './config';
import { startWebhooksService } from './service';

async function main(): Promise<void> {
  const logger = createLogger('webhooks');
  const config = loadConfig();
  if (config.testMode.policy.allowLoopback) logger.warn('test-only setting on: loopback receivers allowed');
  const service = await startWebhooksService(config, logger);
  onShutdown(logger, [() => service.close()]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
