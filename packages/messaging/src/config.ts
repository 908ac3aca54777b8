/**
 * What the messaging module needs to reach Kafka and the schema registry, and how topic names
 * are formed. `messagingConfigFromEnv` reads the standard variables (KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX) for services and tests alike.
 */
import path from 'node:path';

export type MessagingLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

/** Where kafkajs log lines go; a pino logger fits (`logger.warn(obj, msg)` is mapped). */
export interface MessagingLogSink {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface MessagingConfig {
  /** host:port of each bootstrap broker */
  brokers: string[];
  /** the Kafka client id (usually the service name) */
  clientId: string;
  /** base URL of a Confluent-compatible registry, e.g. http://127.0.0.1:18081/apis/ccompat/v7 */
  schemaRegistryUrl: string;
  /** prepended to every topic name (and so to every subject); used to isolate test runs */
  topicPrefix?: string;
  /** folder of the `.avsc` files; defaults to the repository's schemas/avro */
  schemaDir?: string;
  /** kafkajs log level; `warn` by default */
  logLevel?: MessagingLogLevel;
  /** where kafkajs log lines go; stderr as JSON when absent */
  log?: MessagingLogSink;
}

export const DEFAULT_SCHEMA_DIR = path.resolve(__dirname, '../../../schemas/avro');

export class MessagingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MessagingConfigError';
  }
}

/** Reads KAFKA_BROKERS (comma-separated), SCHEMA_REGISTRY_URL and KAFKA_TOPIC_PREFIX. */
export function messagingConfigFromEnv(
  clientId: string,
  env: NodeJS.ProcessEnv = process.env,
): MessagingConfig {
  const problems: string[] = [];
  const brokers = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (brokers.length === 0) problems.push('KAFKA_BROKERS is required (host:port[,host:port...])');
  for (const b of brokers)
    if (!/^[^\s:]+:\d+$/.test(b)) problems.push(`KAFKA_BROKERS: "${b}" is not host:port`);
  const schemaRegistryUrl = env.SCHEMA_REGISTRY_URL ?? '';
  if (!/^https?:\/\/\S+$/.test(schemaRegistryUrl))
    problems.push('SCHEMA_REGISTRY_URL is required (an http(s) URL)');
  if (problems.length > 0)
    throw new MessagingConfigError(`invalid messaging configuration: ${problems.join('; ')}`);
  return { brokers, clientId, schemaRegistryUrl, topicPrefix: env.KAFKA_TOPIC_PREFIX || undefined };
}

/** The real topic name of a logical one: the prefix, when there is one, then the name. */
export function prefixedTopic(config: Pick<MessagingConfig, 'topicPrefix'>, name: string): string {
  return `${config.topicPrefix ?? ''}${name}`;
}
