/**
 * The Avro consumer: joins a group, decodes each value with the writer schema the registry
 * holds for its id, hands tombstones (null values) over as `value: null`, and gives the handler
 * `heartbeat()` for long work (kafkajs only heartbeats between messages; a handler that runs
 * past sessionTimeout would be thrown out of the group).
 *
 * Delivery is at least once: an offset is committed only after the handler resolved. A handler
 * that throws makes kafkajs retry the message; a value that cannot be decoded is an error too
 * unless `onDecodeError` takes it (for example to a dead-letter topic). Nothing is skipped silently.
 */
import type { Consumer, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { registerIdleFetch, type IdleFetchPolicy } from './idle-fetch';
import type { SchemaCatalog } from './schemas';

export interface IncomingMessage<T> {
  /** logical topic name (without the prefix) */
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  /** decoded value; null for a tombstone */
  value: T | null;
  headers: Record<string, string>;
  /** broker timestamp (ms since the epoch, as a string) */
  timestamp: string;
}

export interface MessageContext {
  /** tell the group coordinator this member is alive; call it during long work */
  heartbeat(): Promise<void>;
}

export type MessageHandler<T> = (message: IncomingMessage<T>, ctx: MessageContext) => Promise<void>;

/**
 * Handles a batch of messages of ONE partition, in offset order. The offsets are committed only
 * after the handler resolved; if it throws, the whole batch is delivered again.
 */
export type BatchHandler<T> = (messages: IncomingMessage<T>[], ctx: MessageContext) => Promise<void>;

export interface ConsumerOptions {
  groupId: string;
  /** logical topic names (the prefix is added) */
  topics: string[];
  /** where a group with no committed offset starts; false (newest) by default */
  fromBeginning?: boolean;
  sessionTimeout?: number;
  heartbeatInterval?: number;
  /** longest a fetch waits on the broker for new data (1000 ms by default; bounds disconnect time) */
  maxWaitTimeInMs?: number;
  /**
   * a fetch answers once this many bytes are there (or maxWaitTimeInMs passed): more than 1 makes
   * fewer, larger batches under load at the price of up to maxWaitTimeInMs of latency; 1 by default
   */
  minBytes?: number;
  /**
   * after a fetch that brought nothing, the next one asks for 1 byte and waits up to this long
   * (idle-fetch.ts): an idle consumer sends one fetch per idle wait instead of one per
   * maxWaitTimeInMs, and the first record after a quiet spell comes at once; the next fetch after
   * records uses minBytes/maxWaitTimeInMs again. DEFAULT_IDLE_WAIT_MS by default (never less than
   * maxWaitTimeInMs); 0 turns it off. Like maxWaitTimeInMs it bounds how long disconnect waits.
   */
  idleWaitTimeInMs?: number;
  /** partitions handled at once (order is kept within a partition); 1 by default */
  partitionsConsumedConcurrently?: number;
  /** runBatch: most messages handed to one handler call (a fetched batch is cut); 500 by default */
  maxBatchSize?: number;
  /**
   * commit the consumed offsets at most this often (ms), in one OffsetCommit for every partition,
   * instead of after every fetched batch (each commit is a request and a write to
   * __consumer_offsets on the broker). The price: after a crash or a rebalance up to this much is
   * delivered again, so only for handlers whose effects are idempotent (processed_events, a
   * wake-up). Pending offsets are also committed by a timer, before the lag is read
   * (`commitPending`) and before disconnect. Absent: committed after every batch (kafkajs).
   */
  commitIntervalMs?: number;
  /** takes values that cannot be decoded; when absent such a value is an error (retried) */
  onDecodeError?: (
    error: Error,
    raw: { topic: string; partition: number; offset: string; value: Buffer },
  ) => Promise<void>;
}

/**
 * The commit interval (ConsumerOptions.commitIntervalMs) of the pipeline's workers, whose handlers
 * dedupe on the event id (processed_events) or only wake a loop: one OffsetCommit a second per
 * consumer instead of one per fetched batch.
 */
export const PIPELINE_COMMIT_INTERVAL_MS = 1000;

/** ConsumerOptions.idleWaitTimeInMs by default: kafkajs' fetch wait of our consumers by default */
export const DEFAULT_IDLE_WAIT_MS = 1000;

function headersOf(h: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    if (v === undefined) continue;
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined) out[k] = first.toString();
  }
  return out;
}

/**
 * The offsets handled since the last commit, committed together at most every `intervalMs`
 * (ConsumerOptions.commitIntervalMs). Only partitions this member holds are committed: a
 * rebalance drops the pending offsets of the partitions it lost (their new owner starts from the
 * last commit and its handler dedupes what it sees again).
 */
class CommitPacer {
  private readonly pending = new Map<string, { topic: string; partition: number; offset: string }>();
  private last = Date.now();
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly consumer: Consumer,
    private readonly intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** `offset` (of the last message handled in that partition) is done */
  handled(topic: string, partition: number, offset: string): void {
    this.pending.set(`${topic}\u0000${partition}`, {
      topic,
      partition,
      offset: (BigInt(offset) + 1n).toString(),
    });
  }

  async maybeFlush(): Promise<void> {
    if (Date.now() - this.last >= this.intervalMs) await this.flush();
  }

  /** commits what is pending (errors are dropped: at least once, the next owner re-reads) */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const offsets = [...this.pending.values()];
    this.pending.clear();
    this.last = Date.now();
    this.flushing = this.consumer
      .commitOffsets(offsets)
      .catch(() => undefined)
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  /** after a rebalance: only the partitions assigned now */
  keepOnly(assignment: Record<string, number[]>): void {
    for (const [k, v] of this.pending)
      if (!assignment[v.topic]?.includes(v.partition)) this.pending.delete(k);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** the idle long-poll of a consumer, or none when it would change nothing (or is turned off) */
function idleFetchPolicy(options: ConsumerOptions): IdleFetchPolicy | undefined {
  const minBytes = options.minBytes ?? 1;
  const maxWaitTimeInMs = options.maxWaitTimeInMs ?? DEFAULT_IDLE_WAIT_MS;
  const idle = options.idleWaitTimeInMs ?? DEFAULT_IDLE_WAIT_MS;
  if (idle <= 0 || (minBytes <= 1 && idle <= maxWaitTimeInMs)) return undefined;
  return { minBytes, maxWaitTimeInMs, idleWaitTimeInMs: Math.max(idle, maxWaitTimeInMs), paused: false };
}

export class AvroConsumer {
  private readonly joined: Promise<void>;
  private readonly pacer: CommitPacer | undefined;
  private readonly idle: { policy: IdleFetchPolicy; unregister: () => void } | undefined;

  private constructor(
    private readonly consumer: Consumer,
    private readonly schemas: SchemaCatalog,
    private readonly options: ConsumerOptions,
    private readonly topicName: (name: string) => string,
    private readonly logicalName: (topic: string) => string,
  ) {
    this.joined = new Promise((resolve) => {
      const off = consumer.on(consumer.events.GROUP_JOIN, () => {
        off();
        resolve();
      });
    });
    if (options.commitIntervalMs !== undefined && options.commitIntervalMs > 0) {
      const pacer = new CommitPacer(consumer, options.commitIntervalMs);
      this.pacer = pacer;
      consumer.on(consumer.events.GROUP_JOIN, (e) => pacer.keepOnly(e.payload.memberAssignment));
    }
    const policy = idleFetchPolicy(options);
    if (policy) this.idle = { policy, unregister: registerIdleFetch(options.groupId, policy) };
  }

  static async connect(
    kafka: Kafka,
    schemas: SchemaCatalog,
    options: ConsumerOptions,
    topicName: (name: string) => string,
    logicalName: (topic: string) => string,
  ): Promise<AvroConsumer> {
    const consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeout ?? 30000,
      heartbeatInterval: options.heartbeatInterval ?? 3000,
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? DEFAULT_IDLE_WAIT_MS,
      minBytes: options.minBytes ?? 1,
      allowAutoTopicCreation: false,
    });
    await consumer.connect();
    return new AvroConsumer(consumer, schemas, options, topicName, logicalName);
  }

  /** Subscribes and starts handing messages to `handler`; resolves once consuming has started. */
  async run<T>(handler: MessageHandler<T>): Promise<void> {
    await this.subscribe();
    const pacer = this.pacer;
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      // with a commit interval the pacer commits (after the handler, as kafkajs would)
      autoCommit: !pacer,
      eachMessage: async ({ topic, partition, message, heartbeat }) => {
        const incoming = await this.decode<T>(topic, partition, message);
        if (incoming) await handler(incoming, { heartbeat });
        if (pacer) {
          pacer.handled(topic, partition, message.offset);
          if (incoming) await pacer.maybeFlush();
        }
      },
    });
  }

  private async subscribe(): Promise<void> {
    await this.consumer.subscribe({
      topics: this.options.topics.map(this.topicName),
      fromBeginning: this.options.fromBeginning ?? false,
    });
  }

  /**
   * One fetched message as the handlers see it, or null when its value could not be decoded and
   * `onDecodeError` took it (without that hook the error propagates: kafkajs retries the message).
   */
  private async decode<T>(
    topic: string,
    partition: number,
    message: KafkaMessage,
  ): Promise<IncomingMessage<T> | null> {
    let value: T | null = null;
    if (message.value !== null) {
      try {
        value = (await this.schemas.decode(message.value)) as T;
      } catch (err) {
        if (!this.options.onDecodeError) throw err;
        await this.options.onDecodeError(err as Error, {
          topic,
          partition,
          offset: message.offset,
          value: message.value,
        });
        return null;
      }
    }
    return {
      topic: this.logicalName(topic),
      partition,
      offset: message.offset,
      key: message.key === null ? null : message.key.toString('utf8'),
      value,
      headers: headersOf(message.headers),
      timestamp: message.timestamp,
    };
  }

  /**
   * Subscribes and hands the messages over in batches (one partition's fetched messages, cut at
   * `maxBatchSize`), so the handler can do one transaction per batch. Each batch's offsets are
   * resolved and committed after the handler resolved: at least once, never skipping. A value
   * that cannot be decoded goes to `onDecodeError` (else the batch fails and is retried).
   */
  async runBatch<T>(handler: BatchHandler<T>): Promise<void> {
    const max = Math.max(1, this.options.maxBatchSize ?? 500);
    await this.subscribe();
    const pacer = this.pacer;
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      eachBatchAutoResolve: false,
      // with a commit interval the pacer commits (after the handler, as kafkajs would)
      autoCommit: !pacer,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        commitOffsetsIfNecessary,
        isRunning,
        isStale,
      }) => {
        const { topic, partition } = batch;
        for (let i = 0; i < batch.messages.length; i += max) {
          if (!isRunning() || isStale()) return;
          const slice = batch.messages.slice(i, i + max);
          const decoded: IncomingMessage<T>[] = [];
          for (const message of slice) {
            const incoming = await this.decode<T>(topic, partition, message);
            if (incoming) decoded.push(incoming);
          }
          if (decoded.length > 0) await handler(decoded, { heartbeat });
          resolveOffset(slice[slice.length - 1]!.offset);
          if (pacer) {
            pacer.handled(topic, partition, slice[slice.length - 1]!.offset);
            await pacer.maybeFlush();
          } else await commitOffsetsIfNecessary();
          await heartbeat();
        }
      },
    });
  }

  /** Resolves when this member has joined its group and holds its partitions. */
  whenJoined(): Promise<void> {
    return this.joined;
  }

  /**
   * Stops fetching every subscribed topic (the member stays in its group and keeps its
   * partitions; messages already handed to the handler finish). Used for back-pressure: a
   * service whose in-memory work is full pauses its consumers until it drained.
   */
  pause(): void {
    if (this.idle) this.idle.policy.paused = true;
    this.consumer.pause(this.options.topics.map((t) => ({ topic: this.topicName(t) })));
  }

  /** Fetches again after pause(), from the next uncommitted offset. */
  resume(): void {
    if (this.idle) this.idle.policy.paused = false;
    this.consumer.resume(this.options.topics.map((t) => ({ topic: this.topicName(t) })));
  }

  /**
   * Commits the offsets handled but not yet committed (with `commitIntervalMs`; nothing to do
   * without): before the group's lag is read, so a caught-up consumer shows none.
   */
  async commitPending(): Promise<void> {
    await this.pacer?.flush();
  }

  /** Stops consuming and leaves the group (committed offsets stay; pending ones are committed first). */
  async disconnect(): Promise<void> {
    this.pacer?.stop();
    await this.pacer?.flush();
    await this.consumer.disconnect();
    this.idle?.unregister();
  }
}
