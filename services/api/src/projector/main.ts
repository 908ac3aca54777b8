/**
 * The api's pipeline process: the outbox relay (publishes what POST /dtes and refresh-status
 * commit) and the dte-status projector (keeps the read model and the events feed). It runs
 * beside the HTTP process (`tsx services/api/src/projector/main.ts`), on the same database and
 * schema; any number may run: the advisory lock keeps one relay active, and the projector
 * instances share the consumer group. Reads DATABASE_URL, DATABASE_SCHEMA, KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX and PIPELINE_PARTITIONS.
 */
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import { createLogger, onShutdown } from '@dte/service-runtime';
import { openApiDatabase } from '../db/data-source';
import { startOutboxRelay } from '../outbox/relay';
import { startProjector } from './projector';

async function main(): Promise<void> {
  const logger = createLogger('api-pipeline');
  const url = process.env.DATABASE_URL || 'postgres://dte:dte@127.0.0.1:15432/dte';
  const dataSource = await openApiDatabase({ url, schema: process.env.DATABASE_SCHEMA || undefined });
  const messaging = createKafka({ ...messagingConfigFromEnv('api-pipeline'), log: logger });
  await messaging.ensureTopics(pipelineTopicSpecs());
  const relay = await startOutboxRelay({ dataSource, messaging, logger });
  const projector = await startProjector({ dataSource, messaging, logger });
  onShutdown(logger, [
    () => relay.stop(),
    () => projector.stop(),
    () => messaging.disconnect(),
    () => dataSource.destroy(),
  ]);
  logger.info('api pipeline ready: outbox relay and dte-status projector');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
