/**
 * Secured Kafka and schema registry (managed Kafka: Confluent Cloud, MSK, Aiven), by environment:
 *
 *   KAFKA_SECURITY_PROTOCOL   PLAINTEXT (default) | SSL | SASL_PLAINTEXT | SASL_SSL (Kafka's names)
 *   KAFKA_SSL_CA_FILE         PEM of the CA(s) that signed the brokers' certificates (else the system's)
 *   KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE   client certificate and key (mutual TLS), both or neither
 *   KAFKA_SASL_MECHANISM      PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 (with SASL_*)
 *   KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD  (the password is a secret)
 *   SCHEMA_REGISTRY_USERNAME, SCHEMA_REGISTRY_PASSWORD   HTTP basic auth of the registry
 *   SCHEMA_REGISTRY_CA_FILE, SCHEMA_REGISTRY_CERT_FILE, SCHEMA_REGISTRY_KEY_FILE   its TLS
 *
 * Files are read once, at start (Kubernetes mounts Secrets as files). Every problem is reported
 * together, naming the variable.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

export interface KafkaTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface KafkaSecurity {
  /** TLS to the brokers: true for the system CAs, or the PEMs to use */
  ssl?: true | KafkaTls;
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
}

export interface RegistrySecurity {
  auth?: { username: string; password: string };
  tls?: KafkaTls;
}

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
const MECHANISMS: Record<string, SaslMechanism> = {
  PLAIN: 'plain',
  'SCRAM-SHA-256': 'scram-sha-256',
  'SCRAM-SHA-512': 'scram-sha-512',
};

function readPem(env: NodeJS.ProcessEnv, name: string, problems: string[]): string | undefined {
  const file = env[name]?.trim();
  if (!file) return undefined;
  try {
    const pem = readFileSync(file, 'utf8');
    if (!pem.includes('-----BEGIN ')) problems.push(`${name}: ${file} is not a PEM file`);
    return pem;
  } catch (err) {
    problems.push(
      `${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
    return undefined;
  }
}

function tlsFrom(env: NodeJS.ProcessEnv, prefix: string, problems: string[]): KafkaTls {
  const ca = readPem(env, `${prefix}_CA_FILE`, problems);
  const cert = readPem(env, `${prefix}_CERT_FILE`, problems);
  const key = readPem(env, `${prefix}_KEY_FILE`, problems);
  if (Boolean(env[`${prefix}_CERT_FILE`]?.trim()) !== Boolean(env[`${prefix}_KEY_FILE`]?.trim()))
    problems.push(
      `${prefix}_CERT_FILE and ${prefix}_KEY_FILE go together (a client certificate and its key)`,
    );
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/** The Kafka side; pushes what is wrong onto `problems`. */
export function kafkaSecurityFromEnv(env: NodeJS.ProcessEnv, problems: string[]): KafkaSecurity {
  const protocol = (env.KAFKA_SECURITY_PROTOCOL?.trim() || 'PLAINTEXT').toUpperCase();
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    problems.push(`KAFKA_SECURITY_PROTOCOL must be one of ${PROTOCOLS.join(', ')}`);
    return {};
  }
  const out: KafkaSecurity = {};
  const tlsVars = ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'].filter((v) =>
    env[v]?.trim(),
  );
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    const tls = tlsFrom(env, 'KAFKA_SSL', problems);
    out.ssl = Object.keys(tls).length > 0 ? tls : true;
  } else if (tlsVars.length > 0) {
    problems.push(`${tlsVars.join(', ')} need KAFKA_SECURITY_PROTOCOL=SSL or SASL_SSL`);
  }
  const saslVars = ['KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'];
  if (protocol.startsWith('SASL_')) {
    const mechanism = MECHANISMS[(env.KAFKA_SASL_MECHANISM?.trim() ?? '').toUpperCase()];
    if (!mechanism)
      problems.push(`KAFKA_SASL_MECHANISM must be one of ${Object.keys(MECHANISMS).join(', ')}`);
    const username = env.KAFKA_SASL_USERNAME ?? '';
    const password = env.KAFKA_SASL_PASSWORD ?? '';
    if (!username) problems.push('KAFKA_SASL_USERNAME is required with SASL');
    if (!password) problems.push('KAFKA_SASL_PASSWORD is required with SASL');
    if (mechanism && username && password) out.sasl = { mechanism, username, password };
  } else {
    const set = saslVars.filter((v) => env[v]?.trim());
    if (set.length > 0)
      problems.push(`${set.join(', ')} need KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT or SASL_SSL`);
  }
  return out;
}

/** The registry side; pushes what is wrong onto `problems`. */
export function registrySecurityFromEnv(env: NodeJS.ProcessEnv, problems: string[]): RegistrySecurity {
  const out: RegistrySecurity = {};
  const username = env.SCHEMA_REGISTRY_USERNAME ?? '';
  const password = env.SCHEMA_REGISTRY_PASSWORD ?? '';
  if (Boolean(username) !== Boolean(password))
    problems.push('SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD go together (basic auth)');
  else if (username) out.auth = { username, password };
  const tls = tlsFrom(env, 'SCHEMA_REGISTRY', problems);
  if (Object.keys(tls).length > 0) out.tls = tls;
  return out;
}

/** The https agent the registry client uses for its TLS settings (undefined: Node's defaults). */
export function registryAgent(tls: KafkaTls | undefined): https.Agent | undefined {
  return tls ? new https.Agent({ keepAlive: true, ...tls }) : undefined;
}
