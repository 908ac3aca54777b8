import { createDataSource } from '@dte/database';
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import { localKeyWrapper } from '@dte/secrets';
import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { siiWorkerClient } from '@dte/sii-client';
import { Redis } from 'ioredis';
import { loadConfig } from './config';
import { Uploader } from './uploader';

async function main(): Promise<void> {
  const logger = createLogger('sii-uploader');
  const config = loadConfig();
  const dataSource = createDataSource({
    url: config.databaseUrl,
    schema: config.databaseSchema,
    applicationName: 'sii-uploader',
  });
  await dataSource.initialize();
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
  const sii = siiWorkerClient(config, redis);
  const messaging = createKafka({ ...messagingConfigFromEnv('sii-uploader'), log: logger });
  await messaging.ensureTopics(pipelineTopicSpecs());
  const uploader = new Uploader({
    dataSource,
    keys: localKeyWrapper(config.masterKey, config.masterKeyId),
    sii,
    logger,
    settings: config,
  });
  await uploader.start(messaging);
  const health = await startHealthServer(config.healthPort, [
    { name: 'database', check: async () => void (await dataSource.query('SELECT 1')) },
    { name: 'kafka', check: () => messaging.checkBrokers() },
    { name: 'redis', check: async () => void (await redis.ping()) },
  ]);
  onShutdown(logger, [
    () => health.close(),
    () => uploader.stop(),
    () => messaging.disconnect(),
    () => redis.quit().then(() => undefined),
    () => dataSource.destroy(),
  ]);
  logger.info(
    { healthPort: health.port, maxDocs: config.maxDocs, maxWaitMs: config.maxWaitMs },
    'sii-uploader ready',
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
