import { createDataSource } from '@dte/database';
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import { localKeyWrapper } from '@dte/secrets';
import { createLogger, onShutdown, startHealthServer } from '@dte/service-runtime';
import { siiWorkerClient } from '@dte/sii-client';
import { Redis } from 'ioredis';
import { loadConfig } from './config';
import { siiRcvSource } from './source';
import { RcvSyncService } from './sync-service';

async function main(): Promise<void> {
  const logger = createLogger('rcv-sync');
  const config = loadConfig();
  const dataSource = createDataSource({
    url: config.databaseUrl,
    schema: config.databaseSchema,
    applicationName: 'rcv-sync',
  });
  await dataSource.initialize();
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
  const sii = siiWorkerClient(config, redis);
  const messaging = createKafka({ ...messagingConfigFromEnv('rcv-sync'), log: logger });
  await messaging.ensureTopics(pipelineTopicSpecs());
  const service = new RcvSyncService({
    db: dataSource,
    source: siiRcvSource(dataSource, localKeyWrapper(config.masterKey, config.masterKeyId), sii),
    logger,
    settings: config,
  });
  await service.start(messaging);
  const health = await startHealthServer(config.healthPort, [
    { name: 'database', check: async () => void (await dataSource.query('SELECT 1')) },
    { name: 'redis', check: async () => void (await redis.ping()) },
    // it consumes rcv.sync and dte-status: without Kafka it takes no work
    { name: 'kafka', check: () => messaging.checkBrokers() },
  ]);
  onShutdown(logger, [
    () => health.close(),
    () => service.stop(),
    () => messaging.disconnect(),
    () => redis.quit().then(() => undefined),
    () => dataSource.destroy(),
  ]);
  logger.info({ healthPort: health.port, tickMs: config.tickMs }, 'rcv-sync ready');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
