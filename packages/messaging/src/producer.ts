/**
 * The Avro producer: idempotent (one request in flight, acks from all in-sync replicas), keyed
 * messages placed by the default Java-compatible partitioner (murmur2 of the key), values encoded
 * with the topic's registered schema. A null value is a tombstone and is sent as is.
 */
import { CompressionTypes, Partitioners, type Kafka, type Producer } from 'kafkajs';
import { MessagingConfigError } from './config';
import type { SchemaCatalog } from './schemas';

/**
 * KAFKA_COMPRESSION: the codec of every produce request, `none` (default) or `gzip` (the codecs
 * built into kafkajs). Measured on the relay's path (scripts/bench/kafka-compression.ts,
 * ARCHITECTURE "Producer compression"): gzip shrinks our Avro events to 23 % of the bytes on the
 * wire and in the log at full rounds of 500 documents (48 % at rounds of 5) but costs CPU: about
 * +30 % producer CPU per message at full rounds, +50 % producing and several times the consuming
 * CPU at small rounds. CPU is what limits this pipeline, bytes are not, so the default stays
 * none; gzip is for deployments whose broker network or disk costs more (cross-zone replication).
 */
export function producerCompression(env: NodeJS.ProcessEnv = process.env): CompressionTypes {
  const raw = (env.KAFKA_COMPRESSION ?? 'none').trim().toLowerCase();
  if (raw === 'gzip') return CompressionTypes.GZIP;
  if (raw === 'none') return CompressionTypes.None;
  throw new MessagingConfigError(`KAFKA_COMPRESSION must be none or gzip, got ${JSON.stringify(raw)}`);
}

export interface OutgoingMessage<T> {
  /** partitioning key; messages with one key keep their order */
  key: string | null;
  /** the value, checked against the schema; null sends a tombstone */
  value: T | null;
  headers?: Record<string, string>;
  /** only to override the partitioner (rarely right) */
  partition?: number;
}

export interface SendRequest<T> {
  /** logical topic name (the prefix is added) */
  topic: string;
  /** basename of schemas/avro/<schema>.avsc */
  schema: string;
  messages: OutgoingMessage<T>[];
}

export interface SentRecord {
  topic: string;
  partition: number;
  /** offset of the first message of the batch in that partition */
  baseOffset: string;
}

export class AvroProducer {
  private constructor(
    private readonly producer: Producer,
    private readonly schemas: SchemaCatalog,
    private readonly topicName: (name: string) => string,
    private readonly compression: CompressionTypes,
  ) {}

  static async connect(
    kafka: Kafka,
    schemas: SchemaCatalog,
    topicName: (name: string) => string,
  ): Promise<AvroProducer> {
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    const compression = producerCompression();
    await producer.connect();
    return new AvroProducer(producer, schemas, topicName, compression);
  }

  /** Sends the messages and resolves once the broker acknowledged them (acks = all). */
  async send<T>(req: SendRequest<T>): Promise<SentRecord[]> {
    const topic = this.topicName(req.topic);
    const hasValues = req.messages.some((m) => m.value !== null);
    const id = hasValues ? await this.schemas.idFor(topic, req.schema) : undefined;
    const messages = await Promise.all(
      req.messages.map(async (m) => ({
        key: m.key,
        value: m.value === null ? null : await this.schemas.encode(id!, m.value),
        headers: m.headers,
        partition: m.partition,
      })),
    );
    const meta = await this.producer.send({ topic, acks: -1, compression: this.compression, messages });
    return meta.map((r) => ({ topic: r.topicName, partition: r.partition, baseOffset: r.baseOffset ?? '' }));
  }

  /**
   * Sends messages of several topics in ONE produce request (per broker) and resolves once the
   * broker acknowledged them all (acks = all). Order is kept within each topic as given (requests
   * of one topic are merged in order). Every value is encoded before anything is sent: a value its
   * schema refuses fails the whole call and sends nothing.
   */
  async sendBatch(reqs: SendRequest<unknown>[]): Promise<SentRecord[]> {
    const byTopic = new Map<
      string,
      { key: string | null; value: Buffer | null; headers?: Record<string, string>; partition?: number }[]
    >();
    for (const req of reqs) {
      const topic = this.topicName(req.topic);
      const hasValues = req.messages.some((m) => m.value !== null);
      const id = hasValues ? await this.schemas.idFor(topic, req.schema) : undefined;
      const encoded = await Promise.all(
        req.messages.map(async (m) => ({
          key: m.key,
          value: m.value === null ? null : await this.schemas.encode(id!, m.value),
          headers: m.headers,
          partition: m.partition,
        })),
      );
      const list = byTopic.get(topic) ?? [];
      list.push(...encoded);
      byTopic.set(topic, list);
    }
    if (byTopic.size === 0) return [];
    const meta = await this.producer.sendBatch({
      acks: -1,
      compression: this.compression,
      topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
    });
    return meta.map((r) => ({ topic: r.topicName, partition: r.partition, baseOffset: r.baseOffset ?? '' }));
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}
