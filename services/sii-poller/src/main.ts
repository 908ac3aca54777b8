import { createDataSource } from '@dte/database';
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import { localKeyWrapper } from '@dte/secrets';
import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { siiWorkerClient } from '@dte/sii-client';
import { Redis } from 'ioredis';
import { loadConfig } from './config';
import { Poller } from './poller';

async function main(): Promise<void> {
  const logger = createLogger('sii-poller');
  const config = loadConfig();
  const dataSource = createDataSource({
    url: config.databaseUrl,
    schema: config.databaseSchema,
    applicationName: 'sii-poller',
  });
  await dataSource.initialize();
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
  const sii = siiWorkerClient(config, redis);
  const messaging = createKafka({ ...messagingConfigFromEnv('sii-poller'), log: logger });
  await messaging.ensureTopics(pipelineTopicSpecs());
  const poller = new Poller({
    dataSource,
    keys: localKeyWrapper(config.masterKey, config.masterKeyId),
    sii,
    logger,
    settings: config,
  });
  await poller.start(messaging);
  const health = await startHealthServer(config.healthPort, [
    { name: 'database', check: async () => void (await dataSource.query('SELECT 1')) },
    { name: 'kafka', check: () => messaging.checkBrokers() },
    { name: 'redis', check: async () => void (await redis.ping()) },
  ]);
  onShutdown(logger, [
    () => health.close(),
    () => poller.stop(),
    () => messaging.disconnect(),
    () => redis.quit().then(() => undefined),
    () => dataSource.destroy(),
  ]);
  logger.info({ healthPort: health.port, maxAttempts: config.maxAttempts }, 'sii-poller ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
