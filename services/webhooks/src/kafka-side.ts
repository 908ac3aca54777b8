import {
  PIPELINE_TOPICS,
  type AvroProducer,
  type IncomingMessage,
  type MessageContext,
  type Messaging,
} from '@dte/messaging';
import type { Clock } from './clock';
import { ingestStatus, ingestStatuses, type DteStatusRecord, type IngestStore } from './ingest';
import type { DueAttempt } from './model';
import type { AttemptScheduler } from './scheduler';

/** One retry topic per delay tier (attempts 2, 3, 4, 5), named after the spec's delays. */
export const RETRY_TOPICS = [
  'webhook.retry.1m',
  'webhook.retry.30m',
  'webhook.retry.2h',
  'webhook.retry.12h',
];
export const RETRY_SCHEMA = 'webhook-delivery';
export const STATUS_GROUP = 'webhooks.status';
/** where a dte-status record goes after WEBHOOKS_STATUS_MAX_ATTEMPTS failed handlings */
export const STATUS_DEAD_LETTER_TOPIC = 'dte-status.webhooks.dlq';
export const STATUS_DEAD_LETTER_SCHEMA = 'dte-status-dead-letter';

/** Value of the dead-letter topic (schemas/avro/dte-status-dead-letter.avsc). */
export interface StatusDeadLetter {
  event_id: string;
  dte_id: string;
  organization_id: string;
  source_topic: string;
  source_partition: number;
  source_offset: string;
  consumer_group: string;
  attempts: number;
  error: string;
  failed_at: string;
  record_json: string;
}

export function deadLetterTopicSpecs(partitions: number) {
  return [{ name: STATUS_DEAD_LETTER_TOPIC, partitions }];
}

/** How often a dte-status record is tried before it goes to the dead-letter topic. */
export interface DeadLetterPolicy {
  /** handlings tried in a row (WEBHOOKS_STATUS_MAX_ATTEMPTS) */
  maxAttempts: number;
  /** pause before try n+1 is n times this (WEBHOOKS_STATUS_RETRY_BACKOFF) */
  backoffMs: number;
  producer: AvroProducer;
  onDeadLetter?: (letter: StatusDeadLetter, err: unknown) => void;
}

/** the error's class and message, never its SQL parameters or driver detail */
function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 1000);
  return String(err).slice(0, 1000);
}
export const RETRY_GROUP = 'webhooks.retry';

/**
 * How long a dte-status fetch may wait for how many bytes (~150 records): each fetched batch of a
 * partition is one ingestion transaction of 3-4 statements, so larger batches are fewer
 * statements per record (bench:pipeline at ~40-140 docs/s: ~17 records per batch with 50 ms and
 * 16 KiB). The wait adds at most this much to a verdict's delivery (spec: about 2 s; other
 * events a couple of minutes).
 */
export const STATUS_FETCH_WAIT_MS = 200;
export const STATUS_FETCH_MIN_BYTES = 32 * 1024;

export function retryTopicSpecs(partitions: number) {
  return RETRY_TOPICS.map((name) => ({ name, partitions }));
}

/** Schedules retries on their tier's topic (key = subscription id); first attempts run at once. */
export class KafkaTierScheduler implements AttemptScheduler {
  constructor(
    private readonly producer: AvroProducer,
    private readonly runNow: (due: DueAttempt) => void,
  ) {}

  async schedule(due: DueAttempt, tier: number | null): Promise<void> {
    if (tier === null) {
      this.runNow(due);
      return;
    }
    const topic = RETRY_TOPICS[tier];
    if (!topic) throw new Error(`no retry topic for tier ${tier}`);
    await this.producer.send<DueAttempt>({
      topic,
      schema: RETRY_SCHEMA,
      messages: [{ key: due.subscription_id, value: due }],
    });
  }
}

/**
 * Consumes dte-status a fetched batch at a time (one partition's records, in offset order): the
 * batch becomes delivery records in ONE transaction (ingestStatuses, same outcome as one by one),
 * whose first attempts start at once. If the batch's handling throws, its records are handled
 * again one by one, each as a batch of one: a record whose handling throws is tried again in place
 * (at most `maxAttempts` times, with a growing pause and heartbeats in between); after the last
 * failure it is published to the dead-letter topic and its offset committed, so one poison record
 * (say, one organization's broken data) holds its partition for a bounded time and never stops the
 * records behind it (nor the healthy ones of its batch). If even the dead-letter publish fails, the
 * handler throws and the batch is consumed again: nothing is skipped without a trace (records
 * already ingested are found claimed and add nothing).
 */
export async function consumeStatus(
  messaging: Messaging,
  store: IngestStore,
  clock: Clock,
  run: (due: DueAttempt) => void,
  opts: {
    partitionsConsumedConcurrently?: number;
    fromBeginning?: boolean;
    deadLetter: DeadLetterPolicy;
    /**
     * called once per record ingested, with the record's Kafka headers (`x-request-id`,
     * `x-dte-id`: log correlation) and the delivery attempts it created
     */
    onIngested?: (record: DteStatusRecord, headers: Record<string, string>, due: DueAttempt[]) => void;
    /** most records handled in one transaction (500 by default) */
    maxBatchSize?: number;
    /** told when a batch failed and its records are handled one by one */
    onBatchError?: (err: unknown, records: number) => void;
  },
) {
  const consumer = await messaging.createConsumer({
    groupId: messaging.topic(STATUS_GROUP),
    topics: [PIPELINE_TOPICS.status],
    fromBeginning: opts.fromBeginning ?? false,
    partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 3,
    maxBatchSize: opts.maxBatchSize ?? 500,
    // a fetch waits up to STATUS_FETCH_WAIT_MS for STATUS_FETCH_MIN_BYTES, so a batch (one
    // transaction of 3-4 statements) holds more records
    minBytes: STATUS_FETCH_MIN_BYTES,
    maxWaitTimeInMs: STATUS_FETCH_WAIT_MS,
  });
  const policy = opts.deadLetter;

  const oneByOne = async (msg: IncomingMessage<DteStatusRecord>, ctx: MessageContext) => {
    const record = msg.value!;
    for (let attempt = 1; ; attempt++) {
      let due: DueAttempt[];
      try {
        due = await ingestStatus(record, store, clock);
      } catch (err) {
        if (attempt < policy.maxAttempts) {
          await sleep(policy.backoffMs * attempt);
          await ctx.heartbeat();
          continue;
        }
        const letter: StatusDeadLetter = {
          event_id: record.event_id,
          dte_id: record.dte_id,
          organization_id: record.organization_id,
          source_topic: msg.topic,
          source_partition: msg.partition,
          source_offset: msg.offset,
          consumer_group: STATUS_GROUP,
          attempts: attempt,
          error: describeError(err),
          failed_at: new Date(clock.now()).toISOString(),
          record_json: JSON.stringify(record),
        };
        await policy.producer.send<StatusDeadLetter>({
          topic: STATUS_DEAD_LETTER_TOPIC,
          schema: STATUS_DEAD_LETTER_SCHEMA,
          messages: [{ key: msg.key, value: letter }],
        });
        policy.onDeadLetter?.(letter, err);
        return;
      }
      opts.onIngested?.(record, msg.headers, due);
      for (const d of due) run(d);
      return;
    }
  };

  await consumer.runBatch<DteStatusRecord>(async (msgs, ctx) => {
    // tombstones: the document is gone, nothing to tell
    const live = msgs.filter((m) => m.value !== null);
    if (live.length === 0) return;
    let due: DueAttempt[];
    try {
      // each record's Kafka headers, for the log correlation of what it created
      const headersOf = new Map(live.map((m) => [m.value!.event_id, m.headers]));
      due = await ingestStatuses(
        live.map((m) => m.value!),
        store,
        clock,
        opts.onIngested &&
          ((record, created) => opts.onIngested!(record, headersOf.get(record.event_id) ?? {}, created)),
      );
    } catch (err) {
      opts.onBatchError?.(err, live.length);
      for (const msg of live) {
        await oneByOne(msg, ctx);
        await ctx.heartbeat();
      }
      return;
    }
    for (const d of due) run(d);
  });
  return consumer;
}

/**
 * Consumes the retry topics. A message whose due_at has not come holds its partition until then:
 * the handler sleeps on a timer (no polling, no fetching of that partition) and heartbeats every
 * few seconds, so the member stays in its group; a rebalance (heartbeat fails) or shutdown (the
 * signal) ends the wait without committing, and the message is consumed again later. Messages of
 * one tier are in due order, so the head of a partition is always the next one due, and partitions
 * are consumed concurrently, so one waiting partition never holds another. Due attempts go to
 * `run`, which returns at once: a slow endpoint never holds a partition. An attempt lost in a
 * crash after its offset was committed is found again by the overdue sweep.
 *
 * (KafkaJS's pause() inside eachMessage needs a thrown error to keep the message, and every such
 * throw counts towards the runner's retry budget and restarts the fetch loop, so it is not used.)
 */
export async function consumeRetries(
  messaging: Messaging,
  clock: Clock,
  run: (due: DueAttempt) => void,
  partitions: number,
  /** aborting it ends every wait at once (on shutdown), leaving those messages uncommitted */
  signal?: AbortSignal,
) {
  const consumer = await messaging.createConsumer({
    groupId: messaging.topic(RETRY_GROUP),
    topics: RETRY_TOPICS,
    partitionsConsumedConcurrently: RETRY_TOPICS.length * partitions,
  });
  await consumer.run<DueAttempt>(async (msg, ctx) => {
    if (msg.value === null) return;
    const due = msg.value;
    let wait = Date.parse(due.due_at) - clock.now();
    while (wait > 0) {
      await sleep(Math.min(wait, 3_000), signal);
      if (signal?.aborted) throw new Error('shutting down: retry left for the next consumer');
      await ctx.heartbeat();
      wait = Date.parse(due.due_at) - clock.now();
    }
    run(due);
  });
  return consumer;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
