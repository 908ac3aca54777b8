/**
 * `createKafka(config)` is the one entry point of the messaging module: it returns a handle that
 * creates topics, Avro producers and Avro consumers, all under the configured topic prefix, and
 * disconnects everything it made.
 */
import './request-queue-timer';
import { Kafka, logLevel as LogLevel, type Admin, type LogEntry, type SASLOptions } from 'kafkajs';
import { metrics, onScrape } from '@dte/service-runtime';
import {
  DEFAULT_SCHEMA_DIR,
  DEFAULT_SESSION_TIMEOUT_MS,
  prefixedTopic,
  type MessagingConfig,
  type MessagingLogLevel,
} from './config';
import { AvroConsumer, type ConsumerOptions } from './consumer';
import { AvroProducer } from './producer';
import { SchemaCatalog } from './schemas';
import { ensureTopicsWith, type TopicSpec } from './topics';
import { consumerGroupLag } from './lag';

const LEVELS: Record<MessagingLogLevel, LogLevel> = {
  nothing: LogLevel.NOTHING,
  error: LogLevel.ERROR,
  warn: LogLevel.WARN,
  info: LogLevel.INFO,
  debug: LogLevel.DEBUG,
};

export interface Messaging {
  readonly config: MessagingConfig;
  readonly schemas: SchemaCatalog;
  /** the real (prefixed) name of a logical topic */
  topic(name: string): string;
  /** creates missing topics, grows partitions and sets configs to the declaration */
  ensureTopics(specs: TopicSpec[]): Promise<void>;
  /** deletes topics (logical names); for tests and tooling */
  deleteTopics(names: string[]): Promise<void>;
  createProducer(): Promise<AvroProducer>;
  createConsumer(options: ConsumerOptions): Promise<AvroConsumer>;
  /** resolves when a broker answers a metadata request (readiness); rejects saying why */
  checkBrokers(): Promise<void>;
  /** disconnects every producer, consumer and admin client this handle created */
  disconnect(): Promise<void>;
}

export function createKafka(config: MessagingConfig): Messaging {
  const sink = config.log;
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: config.brokers,
    connectionTimeout: 3000,
    logLevel: LEVELS[config.logLevel ?? 'warn'],
    retry: { retries: 8, initialRetryTime: 200 },
    ...(config.kafkaSecurity?.ssl ? { ssl: config.kafkaSecurity.ssl } : {}),
    ...(config.kafkaSecurity?.sasl ? { sasl: config.kafkaSecurity.sasl as SASLOptions } : {}),
    logCreator: sink
      ? () =>
          ({ level, log }: LogEntry) => {
            const { message, ...extra } = log;
            const fn =
              level <= LogLevel.ERROR
                ? sink.error
                : level === LogLevel.WARN
                  ? sink.warn
                  : level === LogLevel.INFO
                    ? sink.info
                    : sink.debug;
            fn.call(sink, extra, `kafkajs: ${message}`);
          }
      : undefined,
  });
  const schemas = new SchemaCatalog(
    config.schemaRegistryUrl,
    config.schemaDir ?? DEFAULT_SCHEMA_DIR,
    config.registrySecurity,
  );
  const prefix = config.topicPrefix ?? '';
  const topic = (name: string) => prefixedTopic(config, name);
  const logical = (t: string) => (prefix && t.startsWith(prefix) ? t.slice(prefix.length) : t);
  const closers: (() => Promise<void>)[] = [];
  let admin: Promise<Admin> | undefined;
  const getAdmin = () => {
    if (!admin) {
      const a = kafka.admin();
      admin = a.connect().then(() => a);
      admin.catch(() => (admin = undefined));
      closers.push(() => a.disconnect());
    }
    return admin;
  };

  return {
    config,
    schemas,
    topic,
    async ensureTopics(specs) {
      await ensureTopicsWith(
        await getAdmin(),
        specs.map((s) => ({ ...s, topic: topic(s.name) })),
      );
    },
    async deleteTopics(names) {
      const a = await getAdmin();
      const existing = new Set(await a.listTopics());
      const topics = names.map(topic).filter((t) => existing.has(t));
      if (topics.length > 0) await a.deleteTopics({ topics });
    },
    async createProducer() {
      const p = await AvroProducer.connect(kafka, schemas, topic);
      closers.push(() => p.disconnect());
      return p;
    },
    async createConsumer(options) {
      const sessionTimeout = options.sessionTimeout ?? config.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
      const c = await AvroConsumer.connect(
        kafka,
        schemas,
        // a heartbeat several times per session, so one late beat does not cost the membership
        { heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 5)), ...options, sessionTimeout },
        topic,
        logical,
      );
      closers.push(() => c.disconnect());
      // dte_kafka_consumer_lag{group,topic}, read from the brokers when Prometheus scrapes
      const stopLag = onScrape(async () => {
        await c.commitPending();
        const lag = await consumerGroupLag(await getAdmin(), options.groupId, options.topics.map(topic));
        for (const [t, n] of lag) metrics.consumerLag.set({ group: options.groupId, topic: logical(t) }, n);
      });
      closers.push(async () => void stopLag());
      return c;
    },
    async checkBrokers() {
      const cluster = await (await getAdmin()).describeCluster();
      if (cluster.brokers.length === 0) throw new Error('the cluster lists no broker');
    },
    async disconnect() {
      const all = closers.splice(0).reverse();
      const results = await Promise.allSettled(all.map((close) => close()));
      admin = undefined;
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
