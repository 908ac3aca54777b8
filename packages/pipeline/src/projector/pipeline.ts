/**
 * The api's side of the pipeline, started inside the api process by main.ts (and by the
 * standalone entry point services/api/src/pipeline-main.ts): the outbox relay, which publishes what POST /dtes and
 * refresh-status commit, and the dte-status projector, which keeps the read model and the events
 * feed. Every api replica runs both: the advisory lock keeps one relay active and the projector
 * instances share one consumer group. API_PIPELINE=off leaves them out (an HTTP-only replica).
 * Reads KAFKA_BROKERS, SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX, PIPELINE_PARTITIONS and
 * OUTBOX_LINGER_MS (the relay's wait after a NOTIFY, 20 ms by default).
 */
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import type { HealthCheck, Logger } from '@dte/service-runtime';
import type { DataSource } from 'typeorm';
import { reportOutboxMetrics } from '../outbox/metrics';
import { startOutboxRelay } from '../outbox/relay';
import { startProjector } from './projector';

export interface ApiPipeline {
  /** readiness checks of what the pipeline needs (Kafka); none with API_PIPELINE=off */
  checks: HealthCheck[];
  stop(): Promise<void>;
}

export async function startApiPipeline(
  dataSource: DataSource,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ApiPipeline> {
  if (env.API_PIPELINE === 'off') {
    logger.warn('API_PIPELINE=off: this process runs neither the outbox relay nor the projector');
    return { checks: [], stop: async () => undefined };
  }
  const messaging = createKafka({ ...messagingConfigFromEnv('api', env), log: logger });
  await messaging.ensureTopics(
    pipelineTopicSpecs(env.PIPELINE_PARTITIONS ? Number(env.PIPELINE_PARTITIONS) : undefined),
  );
  const relay = await startOutboxRelay({
    dataSource,
    messaging,
    logger,
    lingerMs: env.OUTBOX_LINGER_MS ? Number(env.OUTBOX_LINGER_MS) : undefined,
    retainProcessedEventsMs: processedEventsRetainMs(env),
  });
  const projector = await startProjector({ dataSource, messaging, logger });
  const stopOutboxMetrics = reportOutboxMetrics(dataSource);
  logger.info('api pipeline running: outbox relay and dte-status projector');
  return {
    checks: [{ name: 'kafka', check: () => messaging.checkBrokers() }],
    async stop() {
      stopOutboxMetrics();
      await relay.stop();
      await projector.stop();
      await messaging.disconnect();
    },
  };
}

/** PROCESSED_EVENTS_RETAIN_DAYS (30 by default; 0 keeps every claim): a whole number of days. */
export function processedEventsRetainMs(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.PROCESSED_EVENTS_RETAIN_DAYS;
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw))
    throw new Error(
      `PROCESSED_EVENTS_RETAIN_DAYS must be a whole number of days (0 keeps every claim), not "${raw}"`,
    );
  return Number(raw) * 24 * 3600 * 1000;
}
