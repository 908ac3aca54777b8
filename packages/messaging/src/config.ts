/**
 * What the messaging module needs to reach Kafka and the schema registry, and how topic names
 * are formed. `messagingConfigFromEnv` reads the standard variables (KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX) for services and tests alike.
 */
import path from 'node:path';

import {
  kafkaSecurityFromEnv,
  registrySecurityFromEnv,
  type KafkaSecurity,
  type RegistrySecurity,
} from './security';

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
  /**
   * how long a consumer group waits for a member that stopped heartbeating (a process killed
   * without leaving) before its partitions go to the others and a restarted member can join:
   * KAFKA_SESSION_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS when absent
   */
  sessionTimeoutMs?: number;
  /** TLS and SASL to the brokers (security.ts); none: PLAINTEXT */
  kafkaSecurity?: KafkaSecurity;
  /** basic auth and TLS to the registry */
  registrySecurity?: RegistrySecurity;
}

/** kafkajs' own default is 30 s; a crashed worker's partitions then wait that long for anyone */
export const DEFAULT_SESSION_TIMEOUT_MS = 15_000;
/** the broker's default group.min.session.timeout.ms and group.max.session.timeout.ms */
const SESSION_TIMEOUT_RANGE = [6_000, 1_800_000] as const;

export const DEFAULT_SCHEMA_DIR = path.resolve(__dirname, '../../../schemas/avro');

export class MessagingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MessagingConfigError';
  }
}

/**
 * Reads KAFKA_BROKERS (comma-separated), SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX,
 * KAFKA_SESSION_TIMEOUT_MS, and the TLS/SASL/basic-auth variables of security.ts.
 */
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
  const session = env.KAFKA_SESSION_TIMEOUT_MS?.trim();
  const [min, max] = SESSION_TIMEOUT_RANGE;
  if (session && !(/^\d+$/.test(session) && Number(session) >= min && Number(session) <= max))
    problems.push(`KAFKA_SESSION_TIMEOUT_MS must be whole milliseconds from ${min} to ${max}`);
  const kafkaSecurity = kafkaSecurityFromEnv(env, problems);
  const registrySecurity = registrySecurityFromEnv(env, problems);
  if (problems.length > 0)
    throw new MessagingConfigError(`invalid messaging configuration: ${problems.join('; ')}`);
  return {
    brokers,
    clientId,
    schemaRegistryUrl,
    topicPrefix: env.KAFKA_TOPIC_PREFIX || undefined,
    ...(session ? { sessionTimeoutMs: Number(session) } : {}),
    ...(Object.keys(kafkaSecurity).length > 0 ? { kafkaSecurity } : {}),
    ...(Object.keys(registrySecurity).length > 0 ? { registrySecurity } : {}),
  };
}

/** The real topic name of a logical one: the prefix, when there is one, then the name. */
export function prefixedTopic(config: Pick<MessagingConfig, 'topicPrefix'>, name: string): string {
  return `${config.topicPrefix ?? ''}${name}`;
}
