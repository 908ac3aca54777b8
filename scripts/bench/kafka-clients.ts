/**
 * kafkajs (what @dte/messaging uses) against @confluentinc/kafka-javascript (Confluent's
 * librdkafka-based client, KafkaJS-compatible API) on our two paths, against the local broker:
 *
 * - producer: the outbox relay's pattern: an idempotent producer (acks all, one request in
 *   flight for kafkajs), ROUNDS sends of BATCH keyed messages of SIZE bytes (the size of an
 *   Avro-encoded pipeline event), each send awaited before the next;
 * - consumer: a consumer group reading them back with eachBatch (the signer's and projector's
 *   `runBatch`), from the beginning, until all arrived.
 *
 * Prints wall time, messages/s and CPU ms per 1 000 messages of this process (librdkafka's
 * threads included: process-wide /proc/self/stat) and of the broker. Run:
 *
 *   npx tsx scripts/bench/kafka-clients.ts      # ROUNDS=40 BATCH=500 SIZE=600 CLIENTS=kafkajs,confluent
 *
 * @confluentinc/kafka-javascript is NOT a dependency of the repository (no service uses it, and its
 * native build needs downloads from github.com that this machine cannot reach). Install it for
 * the run only, built from source against the system OpenSSL:
 *
 *   CKJS_LINKING=dynamic npm install --no-save @confluentinc/kafka-javascript@1.10.1
 *
 * Without it the script measures kafkajs alone and says so.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Kafka as KafkaJs, logLevel } from 'kafkajs';
import { testStack } from '../../test/support/env';
import { cpuSecondsOf, pidListeningOn } from './process-cpu';
import { runMain } from './run-main';

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const BATCH = Number(process.env.BATCH ?? 500);
const SIZE = Number(process.env.SIZE ?? 600);
const CLIENTS = (process.env.CLIENTS ?? 'kafkajs,confluent').split(',');
const TOTAL = ROUNDS * BATCH;

interface Producer {
  send(topic: string, messages: { key: string; value: Buffer }[]): Promise<void>;
  close(): Promise<void>;
}
interface Client {
  name: string;
  createTopic(topic: string, partitions: number): Promise<void>;
  deleteTopic(topic: string): Promise<void>;
  producer(): Promise<Producer>;
  /** resolves when `count` messages were read from the topic */
  consume(topic: string, count: number): Promise<void>;
}

function kafkajsClient(brokers: string[]): Client {
  const kafka = new KafkaJs({ clientId: `bench-${randomUUID()}`, brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  return {
    name: 'kafkajs 2.2.4',
    async createTopic(topic, partitions) {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    },
    async deleteTopic(topic) {
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
    async producer() {
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await p.connect();
      return {
        send: async (topic, messages) => {
          await p.send({ topic, acks: -1, messages });
        },
        close: () => p.disconnect(),
      };
    },
    async consume(topic, count) {
      const c = kafka.consumer({ groupId: `bench-${randomUUID()}`, minBytes: 16384, maxWaitTimeInMs: 50 });
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      let seen = 0;
      await new Promise<void>((resolve, reject) => {
        c.run({
          eachBatchAutoResolve: true,
          eachBatch: async ({ batch }) => {
            seen += batch.messages.length;
            if (seen >= count) resolve();
          },
        }).catch(reject);
      });
      await c.disconnect();
    },
  };
}

function confluentClient(brokers: string[]): Client {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { KafkaJS } = require('@confluentinc/kafka-javascript') as {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    KafkaJS: { Kafka: new (c: unknown) => any; logLevel: Record<string, number> };
  };
  const kafka = new KafkaJS.Kafka({
    kafkaJS: { clientId: `bench-${randomUUID()}`, brokers, logLevel: KafkaJS.logLevel.NOTHING },
  });
  const admin = kafka.admin();
  return {
    name: 'confluent-kafka-javascript 1.10.1 (librdkafka 2.15.1)',
    async createTopic(topic, partitions) {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
    },
    async deleteTopic(topic) {
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
    async producer() {
      const p = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 } });
      await p.connect();
      return {
        send: async (topic, messages) => {
          await p.send({ topic, messages });
        },
        close: () => p.disconnect(),
      };
    },
    async consume(topic, count) {
      const c = kafka.consumer({ kafkaJS: { groupId: `bench-${randomUUID()}`, fromBeginning: true } });
      await c.connect();
      await c.subscribe({ topics: [topic] });
      let seen = 0;
      await new Promise<void>((resolve, reject) => {
        c.run({
          eachBatch: async ({ batch }: { batch: { messages: unknown[] } }) => {
            seen += batch.messages.length;
            if (seen >= count) resolve();
          },
        }).catch(reject);
      });
      await c.disconnect();
    },
  };
}

function confluentInstalled(): boolean {
  try {
    require.resolve('@confluentinc/kafka-javascript');
    return true;
  } catch {
    return false;
  }
}

async function measure<T>(broker: number | undefined, f: () => Promise<T>) {
  const c0 = cpuSecondsOf(process.pid) ?? 0;
  const b0 = broker ? (cpuSecondsOf(broker) ?? 0) : 0;
  const t0 = Date.now();
  await f();
  const wall = (Date.now() - t0) / 1000;
  const own = (cpuSecondsOf(process.pid) ?? 0) - c0;
  const brk = broker ? (cpuSecondsOf(broker) ?? 0) - b0 : 0;
  return { wall, own, brk };
}

async function main(): Promise<void> {
  const stack = await testStack();
  const brokers = stack.kafkaBrokers;
  const brokerPid = pidListeningOn(Number(brokers[0]!.split(':')[1]));
  const payload = randomBytes(SIZE);
  console.log(
    `[kafka-clients] ${ROUNDS} sends of ${BATCH} keyed messages of ${SIZE} B (${TOTAL} messages), 2 partitions, broker ${brokers[0]}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const which of CLIENTS) {
    if (which === 'confluent' && !confluentInstalled()) {
      console.log(
        '  @confluentinc/kafka-javascript is not installed: CKJS_LINKING=dynamic npm install --no-save @confluentinc/kafka-javascript@1.10.1',
      );
      continue;
    }
    const client = which === 'confluent' ? confluentClient(brokers) : kafkajsClient(brokers);
    const topic = `bench-kc-${which}-${randomUUID().slice(0, 8)}`;
    await client.createTopic(topic, 2);
    try {
      const producer = await client.producer();
      await producer.send(topic, [{ key: 'warm', value: payload }]);
      const prod = await measure(brokerPid, async () => {
        for (let r = 0; r < ROUNDS; r++)
          await producer.send(
            topic,
            Array.from({ length: BATCH }, () => ({ key: randomUUID(), value: payload })),
          );
      });
      await producer.close();
      const cons = await measure(brokerPid, () => client.consume(topic, TOTAL + 1));
      const per = (s: number) => ((s * 1000 * 1000) / TOTAL).toFixed(1);
      console.log(`  ${client.name}`);
      console.log(
        `    produce: ${(TOTAL / prod.wall).toFixed(0)} msg/s (${prod.wall.toFixed(2)} s), CPU per 1 000 msgs: client ${per(prod.own)} ms, broker ${per(prod.brk)} ms`,
      );
      console.log(
        `    consume: ${(TOTAL / cons.wall).toFixed(0)} msg/s (${cons.wall.toFixed(2)} s, incl. group join), CPU per 1 000 msgs: client ${per(cons.own)} ms, broker ${per(cons.brk)} ms`,
      );
    } finally {
      await client.deleteTopic(topic);
    }
  }
  console.log(
    `  load at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runMain(main);
