import { localKeyWrapper, type KeyWrapper } from '@dte/secrets';
import { createDataSource, databaseOptionsFromEnv } from '@dte/database';
import { createKafka, messagingConfigFromEnv, type Messaging } from '@dte/messaging';
import { startHealthServer, type Logger } from '@dte/service-runtime';
import type { DataSource } from 'typeorm';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { Dispatcher } from './dispatcher';
import { closeDeliveryAgents } from './http-delivery';
import {
  consumeRetries,
  consumeStatus,
  deadLetterTopicSpecs,
  KafkaTierScheduler,
  retryTopicSpecs,
  type StatusDeadLetter,
} from './kafka-side';
import { MailDisableNotifier } from './notifier';
import { PgWebhookStore, pgOwnerLookup } from './pg-store';
import { DeliveryRunner } from './runner';

export interface RunningService {
  healthPort: number;
  runner: DeliveryRunner;
  /** records sent to the dead-letter topic by this process */
  deadLetters: StatusDeadLetter[];
  /** times the consumers were paused because the delivery queue was full */
  pauses: number;
  /** whether the consumers are paused now */
  readonly paused: boolean;
  /** resolves once both consumers have joined their groups and hold partitions */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface ServiceDeps {
  dataSource?: DataSource;
  messaging?: Messaging;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** opens the sealed signing secrets; from MASTER_KEY / MASTER_KEY_ID when absent */
  keys?: KeyWrapper;
}

/**
 * Starts the webhooks service: the dte-status consumer (delivery records, first attempts), the
 * retry-tier consumers, the delivery pool, the overdue sweep and the retention purge, and the
 * health endpoint. Tests pass their own data source and messaging handle.
 */
export async function startWebhooksService(
  config: Config,
  logger: Logger,
  deps: ServiceDeps = {},
): Promise<RunningService> {
  const env = deps.env ?? process.env;
  const clock = deps.clock ?? systemClock;
  const ds =
    deps.dataSource ??
    createDataSource({ ...databaseOptionsFromEnv(env), applicationName: 'webhooks', poolSize: 10 });
  if (!ds.isInitialized) await ds.initialize();
  const messaging =
    deps.messaging ?? createKafka({ ...messagingConfigFromEnv('webhooks', env), log: logger });
  await messaging.ensureTopics([
    ...retryTopicSpecs(config.retryPartitions),
    ...deadLetterTopicSpecs(config.retryPartitions),
  ]);
  const producer = await messaging.createProducer();

  const store = new PgWebhookStore(ds, deps.keys ?? localKeyWrapper(config.masterKey, config.masterKeyId));
  const notifier = new MailDisableNotifier(
    { smtpUrl: config.smtpUrl, from: config.mailFrom },
    pgOwnerLookup(ds),
  );
  const holder: { runner?: DeliveryRunner } = {};
  const run = (due: Parameters<DeliveryRunner['enqueue']>[0]) => holder.runner!.enqueue(due);
  const dispatcher = new Dispatcher({
    store,
    clock,
    plan: { delaysMs: config.retryDelaysMs },
    scheduler: new KafkaTierScheduler(producer, run),
    notifier,
    post: {
      policy: config.testMode.policy,
      timeoutMs: config.timeoutMs,
      ...(config.testMode.ca ? { ca: config.testMode.ca } : {}),
    },
    disableAfter: config.disableAfter,
    leaseMs: config.timeoutMs + 30_000,
    // a claim made ahead is used within 1 s or made again: the claim reads the secret, and the
    // spec's rotation "stops signing at once", so an old secret signs at most ~1 s after it
    claimAheadMaxAgeMs: 1_000,
    logger,
  });
  const consumers: { pause(): void; resume(): void }[] = [];
  const pressure = { paused: false, pauses: 0 };
  const runner = new DeliveryRunner(dispatcher, store, clock, {
    concurrency: config.concurrency,
    perEndpoint: config.endpointConcurrency,
    perOrganization: config.orgConcurrency,
    maxQueued: config.queueMax,
    organizationShare: config.orgQueueShare,
    sweepHoldMs: config.sweepHoldMs,
    onError: (err) => logger.error({ err }, 'webhook attempt failed to run'),
    onPressure: (full) => {
      // the queue is full: stop fetching until it drained (the member keeps its partitions)
      pressure.paused = full;
      if (full) pressure.pauses++;
      logger.warn(
        { waiting: runner.queue.waitingCount },
        full ? 'delivery queue full: consumers paused' : 'delivery queue drained: consumers resumed',
      );
      for (const c of consumers) {
        try {
          if (full) c.pause();
          else c.resume();
        } catch (err) {
          logger.error({ err }, 'could not pause/resume a consumer');
        }
      }
    },
  });
  holder.runner = runner;

  const deadLetters: StatusDeadLetter[] = [];
  const status = await consumeStatus(messaging, store, clock, run, {
    // log correlation: the request id of the POST that issued the document, with the deliveries it caused
    onIngested: (record, headers, due) =>
      (due.length > 0 ? logger.info : logger.debug).call(
        logger,
        {
          dteId: record.dte_id,
          requestId: headers['x-request-id'],
          siiStatus: record.sii_status,
          deliveryIds: due.map((d) => d.delivery_id),
        },
        'webhooks: dte-status consumed',
      ),
    onBatchError: (err, records) =>
      logger.warn({ err, records }, 'dte-status batch failed: its records are handled one by one'),
    deadLetter: {
      maxAttempts: config.statusMaxAttempts,
      backoffMs: config.statusRetryBackoffMs,
      producer,
      onDeadLetter: (letter, err) => {
        deadLetters.push(letter);
        if (deadLetters.length > 100) deadLetters.shift();
        logger.error(
          {
            err,
            dte_id: letter.dte_id,
            organization_id: letter.organization_id,
            offset: letter.source_offset,
          },
          'dte-status record sent to the dead-letter topic',
        );
      },
    },
  });
  const stopping = new AbortController();
  const retries = await consumeRetries(messaging, clock, run, config.retryPartitions, stopping.signal);
  consumers.push(status, retries);
  if (pressure.paused) for (const c of consumers) c.pause();

  const every = (ms: number, what: string, fn: () => Promise<unknown>) => {
    let busy = false;
    const t = setInterval(() => {
      if (busy) return;
      busy = true;
      fn()
        .catch((err) => logger.error({ err }, `${what} failed`))
        .finally(() => (busy = false));
    }, ms);
    t.unref();
    return t;
  };
  const timers = [
    every(config.sweepIntervalMs, 'overdue sweep', () =>
      runner.sweepOverdue(config.firstAttemptGraceMs, config.retryGraceMs),
    ),
    every(config.purgeIntervalMs, 'retention purge', async () => {
      const n = await runner.purge(config.retentionMs);
      if (n > 0) logger.info({ purged: n }, 'terminal delivery records purged');
    }),
  ];

  const health = await startHealthServer(config.healthPort, [
    { name: 'database', check: async () => void (await ds.query('SELECT 1')) },
    { name: 'kafka', check: () => messaging.checkBrokers() },
  ]);
  logger.info({ healthPort: health.port, retryDelaysMs: config.retryDelaysMs }, 'webhooks ready');
  return {
    healthPort: health.port,
    runner,
    deadLetters,
    get pauses() {
      return pressure.pauses;
    },
    get paused() {
      return pressure.paused;
    },
    async ready() {
      await Promise.all([status.whenJoined(), retries.whenJoined()]);
    },
    async close() {
      timers.forEach(clearInterval);
      stopping.abort();
      await status.disconnect().catch(() => undefined);
      await retries.disconnect().catch(() => undefined);
      await runner.idle();
      await health.close();
      closeDeliveryAgents();
      notifier.close();
      if (!deps.messaging) await messaging.disconnect();
      else await producer.disconnect().catch(() => undefined);
      if (!deps.dataSource) await ds.destroy();
    },
  };
}
