import { parse, readConfig } from '@dte/service-runtime';

export interface Config {
  healthPort: number;
  databaseUrl: string;
  databaseSchema?: string;
  /** base64 of the 32-byte master key that unwraps the sealed certificates and CAF keys */
  masterKey: string;
  masterKeyId: string;
  /** dte.commands partitions handled at once */
  concurrency: number;
}

const positive = (raw: string): number => {
  const n = parse.int(raw);
  if (n <= 0) throw new Error(`expected a positive integer, got ${n}`);
  return n;
};

/**
 * Every environment variable this service reads, checked at start-up (Kafka: KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL, KAFKA_TOPIC_PREFIX through @dte/messaging).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>(
    {
      healthPort: { env: 'SIGNER_HEALTH_PORT', default: 3101, parse: parse.port },
      databaseUrl: { env: 'DATABASE_URL', default: 'postgres://dte:dte@127.0.0.1:15432/dte' },
      databaseSchema: { env: 'DATABASE_SCHEMA', required: false },
      masterKey: { env: 'MASTER_KEY' },
      masterKeyId: { env: 'MASTER_KEY_ID', default: 'mk1' },
      concurrency: { env: 'SIGNER_CONCURRENCY', default: 3, parse: positive },
    },
    env,
  );
}
