import { createDataSource } from '@dte/database';
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import { localKeyWrapper } from '@dte/secrets';
import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { loadConfig } from './config';
import { startSigner } from './signer';

async function main(): Promise<void> {
  const logger = createLogger('signer');
  const config = loadConfig();
  const dataSource = createDataSource({
    url: config.databaseUrl,
    schema: config.databaseSchema,
    applicationName: 'signer',
  });
  await dataSource.initialize();
  const messaging = createKafka({ ...messagingConfigFromEnv('signer'), log: logger });
  await messaging.ensureTopics(pipelineTopicSpecs());
  const keys = localKeyWrapper(config.masterKey, config.masterKeyId);
  const signer = await startSigner({ dataSource, messaging, keys, logger, concurrency: config.concurrency });
  const health = await startHealthServer(config.healthPort, [
    { name: 'database', check: async () => void (await dataSource.query('SELECT 1')) },
    { name: 'kafka', check: () => messaging.checkBrokers() },
  ]);
  onShutdown(logger, [
    () => health.close(),
    () => signer.stop(),
    () => messaging.disconnect(),
    () => dataSource.destroy(),
  ]);
  logger.info({ healthPort: health.port }, 'signer ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
