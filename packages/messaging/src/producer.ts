/**
 * The Avro producer: idempotent (one request in flight, acks from all in-sync replicas), keyed
 * messages placed by the default Java-compatible partitioner (murmur2 of the key), values encoded
 * with the topic's registered schema. A null value is a tombstone and is sent as is.
 */
import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { SchemaCatalog } from './schemas';

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
    await producer.connect();
    return new AvroProducer(producer, schemas, topicName);
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
    const meta = await this.producer.send({ topic, acks: -1, messages });
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
      topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
    });
    return meta.map((r) => ({ topic: r.topicName, partition: r.partition, baseOffset: r.baseOffset ?? '' }));
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
  }
}
