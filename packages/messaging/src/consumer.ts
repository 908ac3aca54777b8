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
import type { Consumer, IHeaders, Kafka } from 'kafkajs';
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
  /** partitions handled at once (order is kept within a partition); 1 by default */
  partitionsConsumedConcurrently?: number;
  /** runBatch: most messages handed to one handler call (a fetched batch is cut); 500 by default */
  maxBatchSize?: number;
  /** takes values that cannot be decoded; when absent such a value is an error (retried) */
  onDecodeError?: (
    error: Error,
    raw: { topic: string; partition: number; offset: string; value: Buffer },
  ) => Promise<void>;
}

function headersOf(h: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    if (v === undefined) continue;
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined) out[k] = first.toString();
  }
  return out;
}

export class AvroConsumer {
  private readonly joined: Promise<void>;

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
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? 1000,
      minBytes: options.minBytes ?? 1,
      allowAutoTopicCreation: false,
    });
    await consumer.connect();
    return new AvroConsumer(consumer, schemas, options, topicName, logicalName);
  }

  /** Subscribes and starts handing messages to `handler`; resolves once consuming has started. */
  async run<T>(handler: MessageHandler<T>): Promise<void> {
    await this.consumer.subscribe({
      topics: this.options.topics.map(this.topicName),
      fromBeginning: this.options.fromBeginning ?? false,
    });
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      eachMessage: async ({ topic, partition, message, heartbeat }) => {
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
            return;
          }
        }
        await handler(
          {
            topic: this.logicalName(topic),
            partition,
            offset: message.offset,
            key: message.key === null ? null : message.key.toString('utf8'),
            value,
            headers: headersOf(message.headers),
            timestamp: message.timestamp,
          },
          { heartbeat },
        );
      },
    });
  }

  /**
   * Subscribes and hands the messages over in batches (one partition's fetched messages, cut at
   * `maxBatchSize`), so the handler can do one transaction per batch. Each batch's offsets are
   * resolved and committed after the handler resolved: at least once, never skipping. A value
   * that cannot be decoded goes to `onDecodeError` (else the batch fails and is retried).
   */
  async runBatch<T>(handler: BatchHandler<T>): Promise<void> {
    const max = Math.max(1, this.options.maxBatchSize ?? 500);
    await this.consumer.subscribe({
      topics: this.options.topics.map(this.topicName),
      fromBeginning: this.options.fromBeginning ?? false,
    });
    await this.consumer.run({
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
      eachBatchAutoResolve: false,
      autoCommit: true,
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
                continue;
              }
            }
            decoded.push({
              topic: this.logicalName(topic),
              partition,
              offset: message.offset,
              key: message.key === null ? null : message.key.toString('utf8'),
              value,
              headers: headersOf(message.headers),
              timestamp: message.timestamp,
            });
          }
          if (decoded.length > 0) await handler(decoded, { heartbeat });
          resolveOffset(slice[slice.length - 1]!.offset);
          await commitOffsetsIfNecessary();
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
    this.consumer.pause(this.options.topics.map((t) => ({ topic: this.topicName(t) })));
  }

  /** Fetches again after pause(), from the next uncommitted offset. */
  resume(): void {
    this.consumer.resume(this.options.topics.map((t) => ({ topic: this.topicName(t) })));
  }

  /** Stops consuming and leaves the group (committed offsets stay). */
  async disconnect(): Promise<void> {
    await this.consumer.disconnect();
  }
}
