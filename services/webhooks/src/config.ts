import { parse, readConfig } from '@dte/service-runtime';
import { parseDuration, parseDurationList } from './durations';
import { readTestMode, type TestModeSettings } from './test-mode';

export interface Config {
  healthPort: number;
  /** delays before attempts 2..5 (spec: 1m, 30m, 2h, 12h); one retry topic each */
  retryDelaysMs: number[];
  /** how long an endpoint has to answer (spec: 10 s) */
  timeoutMs: number;
  /** how long terminal delivery records are kept (spec: 90 days) */
  retentionMs: number;
  /** consecutive exhausted deliveries that deactivate an endpoint (spec: 3) */
  disableAfter: number;
  concurrency: number;
  endpointConcurrency: number;
  sweepIntervalMs: number;
  firstAttemptGraceMs: number;
  retryGraceMs: number;
  purgeIntervalMs: number;
  retryPartitions: number;
  /** attempts in flight for one organization */
  orgConcurrency: number;
  /** attempts waiting in memory, all organizations; the consumers pause at 3/4 of it */
  queueMax: number;
  /** attempts waiting in memory for one organization */
  orgQueueShare: number;
  /** how long the overdue sweep's claim of a queued row lasts */
  sweepHoldMs: number;
  /** handlings of one dte-status record before it goes to the dead-letter topic */
  statusMaxAttempts: number;
  /** pause before handling n+1 of a failing dte-status record is n times this */
  statusRetryBackoffMs: number;
  smtpUrl: string;
  mailFrom: string;
  /** opens the sealed signing secrets (MASTER_KEY, base64 of 32 bytes; the api's) */
  masterKey: string;
  masterKeyId: string;
  testMode: TestModeSettings;
}

export const RETRY_TIERS = 4;

function delays(raw: string): number[] {
  const list = parseDurationList(raw);
  if (list.length !== RETRY_TIERS)
    throw new Error(`expected ${RETRY_TIERS} delays (attempts 2 to 5), got ${list.length}`);
  return list;
}

function positive(raw: string): number {
  const n = parse.int(raw);
  if (n < 1) throw new Error(`expected a positive integer, got ${n}`);
  return n;
}

/**
 * Every environment variable this service reads, checked at start-up (DATABASE_URL,
 * DATABASE_SCHEMA, KAFKA_BROKERS, SCHEMA_REGISTRY_URL and KAFKA_TOPIC_PREFIX are read by
 * @dte/database and @dte/messaging). The test-only settings are refused unless NODE_ENV=test.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const base = readConfig<Omit<Config, 'testMode'>>(
    {
      healthPort: { env: 'WEBHOOKS_HEALTH_PORT', default: 3104, parse: parse.port },
      retryDelaysMs: { env: 'WEBHOOKS_RETRY_DELAYS', default: delays('1m,30m,2h,12h'), parse: delays },
      timeoutMs: { env: 'WEBHOOKS_TIMEOUT', default: 10_000, parse: parseDuration },
      retentionMs: { env: 'WEBHOOKS_RETENTION', default: 90 * 86_400_000, parse: parseDuration },
      disableAfter: { env: 'WEBHOOKS_DISABLE_AFTER', default: 3, parse: positive },
      concurrency: { env: 'WEBHOOKS_CONCURRENCY', default: 64, parse: positive },
      endpointConcurrency: { env: 'WEBHOOKS_ENDPOINT_CONCURRENCY', default: 4, parse: positive },
      sweepIntervalMs: { env: 'WEBHOOKS_SWEEP_INTERVAL', default: 2_000, parse: parseDuration },
      firstAttemptGraceMs: { env: 'WEBHOOKS_FIRST_ATTEMPT_GRACE', default: 1_000, parse: parseDuration },
      retryGraceMs: { env: 'WEBHOOKS_RETRY_GRACE', default: 60_000, parse: parseDuration },
      purgeIntervalMs: { env: 'WEBHOOKS_PURGE_INTERVAL', default: 3_600_000, parse: parseDuration },
      retryPartitions: { env: 'WEBHOOKS_RETRY_PARTITIONS', default: 6, parse: positive },
      orgConcurrency: { env: 'WEBHOOKS_ORG_CONCURRENCY', default: 16, parse: positive },
      queueMax: { env: 'WEBHOOKS_QUEUE_MAX', default: 10_000, parse: positive },
      orgQueueShare: { env: 'WEBHOOKS_ORG_QUEUE_SHARE', default: 1_000, parse: positive },
      sweepHoldMs: { env: 'WEBHOOKS_SWEEP_HOLD', default: 120_000, parse: parseDuration },
      statusMaxAttempts: { env: 'WEBHOOKS_STATUS_MAX_ATTEMPTS', default: 5, parse: positive },
      statusRetryBackoffMs: { env: 'WEBHOOKS_STATUS_RETRY_BACKOFF', default: 500, parse: parseDuration },
      smtpUrl: { env: 'SMTP_URL', required: true },
      mailFrom: { env: 'MAIL_FROM', default: 'Service Webhooks <no-reply@localhost>' },
      masterKey: { env: 'MASTER_KEY', required: true },
      masterKeyId: { env: 'MASTER_KEY_ID', default: 'mk1' },
    },
    env,
  );
  return { ...base, testMode: readTestMode(env) };
}
