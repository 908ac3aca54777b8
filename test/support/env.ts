/**
 * The test harness: where the stack is, and how each test run isolates itself.
 *
 *   testStack()            endpoints of Kafka, the schema registry, PostgreSQL and Redis, found once
 *                          per process in this order:
 *                            1. env vars KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL, REDIS_URL
 *                               (all four set: used as they are);
 *                            2. testcontainers, when a container runtime answers (detected quickly:
 *                               no socket, no try) — Kafka and PostgreSQL modules, Apicurio and Redis
 *                               as generic containers; DTE_TEST_STACK=containers forces it;
 *                            3. the local stack of scripts/stack.sh (brought up when not running;
 *                               parts given by env vars are not started). DTE_TEST_STACK=local
 *                               skips the container check.
 *   runId                  unique id of this test process
 *   uniqueTopicPrefix(l)   a topic prefix no other run uses (`t-<runId>-<n>-<l>.`)
 *   freshSchema(l)         a new PostgreSQL schema, with drop()
 *   adminQuery(sql, args)  one statement on a connection of its own (outside test schemas)
 *   migratedDatabase(l)    a fresh schema with every migration applied, as a typeorm DataSource
 *   testMessaging(l)       a @dte/messaging handle under a unique topic prefix; cleanup() deletes
 *                          the topics it ensured and their registry subjects
 *   siiSharedDir()         the SII schemas and docs (SII_SHARED_DIR, else ../shared/sii)
 *   repoRoot               the repository root
 *
 * Call testStack() in a `before` hook with a generous timeout (a cold local stack takes ~20 s).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { createKafka, type Messaging } from '@dte/messaging';
import { createDataSource, runMigrations } from '@dte/database';
import type { DataSource } from 'typeorm';

const execFileP = promisify(execFile);

export const repoRoot = path.resolve(__dirname, '../..');

export interface TestStack {
  kind: 'env' | 'containers' | 'local';
  kafkaBrokers: string[];
  schemaRegistryUrl: string;
  databaseUrl: string;
  redisUrl: string;
}

const ENV_KEYS = ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'DATABASE_URL', 'REDIS_URL'] as const;

function fromEnv(env: Record<string, string | undefined>, kind: TestStack['kind']): TestStack {
  const missing = ENV_KEYS.filter((k) => !env[k]);
  if (missing.length > 0) throw new Error(`test stack (${kind}): ${missing.join(', ')} not known`);
  return {
    kind,
    kafkaBrokers: env.KAFKA_BROKERS!.split(',').map((b) => b.trim()),
    schemaRegistryUrl: env.SCHEMA_REGISTRY_URL!,
    databaseUrl: env.DATABASE_URL!,
    redisUrl: env.REDIS_URL!,
  };
}

/** A container runtime socket that exists (checked without starting any client). */
function containerSocket(): string | undefined {
  if (process.env.DOCKER_HOST) return process.env.DOCKER_HOST;
  const candidates = [
    '/var/run/docker.sock',
    process.env.XDG_RUNTIME_DIR && path.join(process.env.XDG_RUNTIME_DIR, 'podman/podman.sock'),
    process.env.HOME && path.join(process.env.HOME, '.docker/run/docker.sock'),
  ].filter((c): c is string => Boolean(c));
  return candidates.find((c) => fs.existsSync(c));
}

async function containerRuntimeAnswers(): Promise<boolean> {
  if (!containerSocket()) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const client = await Promise.race([
      getContainerRuntimeClient(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 5000)),
    ]);
    return Boolean(client);
  } catch {
    return false;
  }
}

/** Kafka, PostgreSQL, Apicurio and Redis in containers (only where a runtime answers). */
async function containerStack(): Promise<TestStack> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const [kafka, pg, registry, redis] = await Promise.all([
    new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start(),
    new PostgreSqlContainer('postgres:15-alpine')
      .withDatabase('dte')
      .withUsername('dte')
      .withPassword('dte')
      .start(),
    new GenericContainer('apicurio/apicurio-registry:3.0.9')
      .withEnvironment({ APICURIO_CCOMPAT_USE_CANONICAL_HASH: 'true' })
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
      .start(),
    new GenericContainer('redis:7-alpine').withExposedPorts(6379).start(),
  ]);
  return {
    kind: 'containers',
    kafkaBrokers: [`${kafka.getHost()}:${kafka.getMappedPort(9093)}`],
    schemaRegistryUrl: `http://${registry.getHost()}:${registry.getMappedPort(8080)}/apis/ccompat/v7`,
    databaseUrl: pg.getConnectionUri(),
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
  };
}

/** Parses KEY=value lines (the format of .stack/endpoints.env and `stack.sh env`). */
function parseEnvLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}

async function localStack(): Promise<TestStack> {
  const script = path.join(repoRoot, 'scripts/stack.sh');
  try {
    await execFileP('bash', [script, 'up'], { cwd: repoRoot, maxBuffer: 1 << 20 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`scripts/stack.sh up failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
  const { stdout } = await execFileP('bash', [script, 'env'], { cwd: repoRoot });
  return fromEnv({ ...parseEnvLines(stdout), ...pickEnv() }, 'local');
}

function pickEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ENV_KEYS) if (process.env[k]) out[k] = process.env[k]!;
  return out;
}

let stack: Promise<TestStack> | undefined;

/** The endpoints every test uses (found once per process). */
export function testStack(): Promise<TestStack> {
  if (!stack) {
    stack = (async () => {
      const forced = process.env.DTE_TEST_STACK;
      if (forced !== 'local' && forced !== 'containers' && ENV_KEYS.every((k) => process.env[k]))
        return fromEnv(process.env, 'env');
      if (forced === 'containers' || (forced !== 'local' && (await containerRuntimeAnswers())))
        return containerStack();
      return localStack();
    })();
    stack.catch(() => (stack = undefined));
  }
  return stack;
}

export const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
let counter = 0;

function label(l: string): string {
  return l
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 20);
}

/** A topic prefix no other run (and no other call in this run) uses. */
export function uniqueTopicPrefix(l = 'x'): string {
  counter += 1;
  return `t-${runId}-${counter}-${label(l)}.`;
}

/**
 * Runs one statement on its own short-lived connection to the database (outside any test schema):
 * for creating and dropping schemas and for checks independent of the code under test.
 */
export async function adminQuery<T = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const { databaseUrl } = await testStack();
  const ds = createDataSource({ url: databaseUrl, poolSize: 1, entities: [], migrations: [] });
  await ds.initialize();
  try {
    return (await ds.query(sql, params)) as T[];
  } finally {
    await ds.destroy();
  }
}

export interface FreshSchema {
  name: string;
  drop(): Promise<void>;
}

/** Creates a new, empty PostgreSQL schema; drop() removes it with everything in it. */
export async function freshSchema(l = 'x'): Promise<FreshSchema> {
  counter += 1;
  const name = `t_${runId}_${counter}_${label(l)}`.slice(0, 63);
  await adminQuery(`CREATE SCHEMA "${name}"`);
  return {
    name,
    drop: async () => {
      await adminQuery(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    },
  };
}

export interface MigratedDatabase {
  dataSource: DataSource;
  schema: string;
  /** migrations applied when it was created */
  applied: string[];
  cleanup(): Promise<void>;
}

/** A fresh schema with every migration applied; cleanup() closes the pool and drops the schema. */
export async function migratedDatabase(l = 'db'): Promise<MigratedDatabase> {
  const { databaseUrl } = await testStack();
  const schema = await freshSchema(l);
  const dataSource = createDataSource({ url: databaseUrl, schema: schema.name, poolSize: 4 });
  const applied = await runMigrations(dataSource);
  return {
    dataSource,
    schema: schema.name,
    applied,
    async cleanup() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await schema.drop();
    },
  };
}

export interface TestMessaging {
  messaging: Messaging;
  prefix: string;
  /** disconnects every client and deletes the run's topics and their subjects */
  cleanup(): Promise<void>;
}

/** A messaging handle under a unique topic prefix. */
export async function testMessaging(l = 'msg'): Promise<TestMessaging> {
  const s = await testStack();
  const prefix = uniqueTopicPrefix(l);
  const connect = () =>
    createKafka({
      brokers: s.kafkaBrokers,
      clientId: `test-${runId}`,
      schemaRegistryUrl: s.schemaRegistryUrl,
      topicPrefix: prefix,
      // kafkajs logs retried, harmless broker answers at ERROR; failures reach the tests as errors.
      logLevel: process.env.DTE_TEST_KAFKA_LOG === '1' ? 'warn' : 'nothing',
    });
  const messaging = connect();
  const created = new Set<string>();
  const ensure = messaging.ensureTopics.bind(messaging);
  messaging.ensureTopics = async (specs) => {
    specs.forEach((sp) => created.add(sp.name));
    await ensure(specs);
  };
  return {
    messaging,
    prefix,
    async cleanup() {
      // Consumers leave first, so that no fetch races the deletion of their topics.
      await messaging.disconnect();
      const admin = connect();
      try {
        await admin.deleteTopics([...created]);
      } finally {
        await admin.disconnect();
      }
      // The run's subjects go too (soft, then permanent delete), so the registry does not grow.
      for (const name of created) {
        const subject = encodeURIComponent(`${messaging.topic(name)}-value`);
        for (const query of ['', '?permanent=true']) {
          const res = await fetch(`${s.schemaRegistryUrl}/subjects/${subject}${query}`, { method: 'DELETE' });
          if (!res.ok && res.status !== 404)
            throw new Error(`registry: DELETE subject ${subject}${query}: ${res.status}`);
        }
      }
    },
  };
}

/** The folder of SII schemas and documents: SII_SHARED_DIR, else ../shared/sii beside the repo. */
export function siiSharedDir(): string {
  const dir = process.env.SII_SHARED_DIR || path.resolve(repoRoot, '../shared/sii');
  if (!fs.existsSync(dir))
    throw new Error(
      `SII shared folder not found at ${dir} (set SII_SHARED_DIR or place shared/ beside the repo)`,
    );
  return dir;
}
