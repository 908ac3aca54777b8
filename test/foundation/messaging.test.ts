// An Avro value round-trips through the real broker with its schema registered in the real
// registry; keys land where Kafka's Java partitioner puts them; tombstones pass as null values.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from '@dte/messaging';
import { repoRoot, testMessaging, testStack, type TestMessaging, type TestStack } from '../support/env';
import type { FoundationDemo as Demo } from '../support/foundation-demo';

/** Collects messages until `count` arrived (or fails after `ms`). */
function collector<T>(count: number, ms = 30000) {
  const got: IncomingMessage<T>[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    setTimeout(
      () => reject(new Error(`only ${got.length} of ${count} messages within ${ms} ms`)),
      ms,
    ).unref();
  });
  return {
    got,
    finished,
    handler: async (m: IncomingMessage<T>) => {
      got.push(m);
      if (got.length >= count) done();
    },
  };
}

async function registryGet(stack: TestStack, p: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${stack.schemaRegistryUrl}${p}`, {
    headers: { accept: 'application/vnd.schemaregistry.v1+json' },
  });
  return { status: res.status, body: await res.json() };
}

/** The end offset of each partition, read with a plain kafkajs admin client. */
async function highWatermarks(stack: TestStack, topic: string): Promise<Record<number, string>> {
  const { Kafka } = await import('kafkajs');
  const admin = new Kafka({ brokers: stack.kafkaBrokers, logLevel: 0 }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return Object.fromEntries(offsets.map((o) => [o.partition, o.high]));
  } finally {
    await admin.disconnect();
  }
}

describe('foundation: messaging through the real broker and registry', function () {
  this.timeout(90000);
  let stack: TestStack;
  let t: TestMessaging;

  before(async function () {
    this.timeout(240000);
    stack = await testStack();
    t = await testMessaging('foundation');
  });
  after(async () => {
    await t?.cleanup();
  });

  it('round-trips an Avro value and registers its schema under <topic>-value', async () => {
    const { messaging } = t;
    await messaging.ensureTopics([{ name: 'demo', partitions: 3 }]);
    const sent: Demo = {
      id: 'doc-1',
      amount: 119000,
      kind: 'SIGNED',
      note: 'ñandú',
      observed_at: new Date(1763780000123),
    };
    const producer = await messaging.createProducer();
    const [meta] = await producer.send<Demo>({
      topic: 'demo',
      schema: 'foundation-demo',
      messages: [{ key: 'doc-1', value: sent }],
    });
    expect(meta.topic).to.equal(`${t.prefix}demo`);

    const c = collector<Demo>(1);
    const consumer = await messaging.createConsumer({
      groupId: `${t.prefix}g1`,
      topics: ['demo'],
      fromBeginning: true,
    });
    await consumer.run(c.handler);
    await c.finished;
    const [got] = c.got;
    expect(got.topic).to.equal('demo');
    expect(got.key).to.equal('doc-1');
    expect(got.partition).to.equal(meta.partition);
    expect({ ...got.value }).to.deep.equal(sent);

    // The registry itself (read over its REST API, not through the client) holds the schema.
    const subject = `${t.prefix}demo-value`;
    const subjects = await registryGet(stack, '/subjects');
    expect(subjects.body).to.include(subject);
    const latest = (await registryGet(stack, `/subjects/${encodeURIComponent(subject)}/versions/latest`))
      .body as {
      id: number;
      schema: string;
    };
    const fileSchema = JSON.parse(
      fs.readFileSync(path.join(repoRoot, 'schemas/avro/foundation-demo.avsc'), 'utf8'),
    );
    const registered = JSON.parse(latest.schema);
    expect(registered.name).to.equal(fileSchema.name);
    expect(registered.fields.map((f: { name: string }) => f.name)).to.deep.equal(
      fileSchema.fields.map((f: { name: string }) => f.name),
    );
    expect(await messaging.schemas.latestId(messaging.topic('demo'))).to.equal(latest.id);
  });

  it('rejects a value that does not match the schema and sends nothing', async () => {
    const { messaging } = t;
    await messaging.ensureTopics([{ name: 'demo', partitions: 3 }]);
    const producer = await messaging.createProducer();
    const before = await highWatermarks(stack, messaging.topic('demo'));
    let error: Error | undefined;
    try {
      await producer.send({
        topic: 'demo',
        schema: 'foundation-demo',
        messages: [
          {
            key: 'bad',
            value: { id: 'bad', amount: 'not a number', kind: 'CREATED', observed_at: new Date() },
          },
        ],
      });
    } catch (err) {
      error = err as Error;
    }
    expect(error, 'an invalid value must be refused').to.be.instanceOf(Error);
    expect(error!.message).to.match(/amount|invalid/i);
    expect(await highWatermarks(stack, messaging.topic('demo'))).to.deep.equal(before);
  });

  it("places keys on the partitions Kafka's Java partitioner chooses (murmur2)", async () => {
    // murmur2 values from Kafka's own UtilsTest (checked against kafka-clients 3.9.1 Utils.murmur2).
    const javaMurmur2: Record<string, number> = {
      '21': -973932308,
      foobar: -790332482,
      'a-little-bit-long-string': -985981536,
      'a-little-bit-longer-string': -1486304829,
      lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8: -58897971,
      abc: 479470107,
    };
    const partitions = 5;
    const { messaging } = t;
    await messaging.ensureTopics([{ name: 'placed', partitions }]);
    const producer = await messaging.createProducer();
    for (const [key, hash] of Object.entries(javaMurmur2)) {
      const [meta] = await producer.send<Demo>({
        topic: 'placed',
        schema: 'foundation-demo',
        messages: [
          { key, value: { id: key, amount: 1, kind: 'CREATED', note: null, observed_at: new Date() } },
        ],
      });
      expect(meta.partition, `key ${key}`).to.equal((hash & 0x7fffffff) % partitions);
    }
  });

  it('creates a compacted topic with the declared partitions, and hands tombstones over as null', async () => {
    const { messaging } = t;
    await messaging.ensureTopics([
      { name: 'status', partitions: 2, configs: { 'cleanup.policy': 'compact' } },
    ]);
    await messaging.ensureTopics([
      { name: 'status', partitions: 2, configs: { 'cleanup.policy': 'compact' } },
    ]);

    const producer = await messaging.createProducer();
    const value: Demo = {
      id: 'doc-9',
      amount: 5,
      kind: 'CREATED',
      note: null,
      observed_at: new Date(1763780000000),
    };
    await producer.send<Demo>({
      topic: 'status',
      schema: 'foundation-demo',
      messages: [{ key: 'doc-9', value }],
    });
    await producer.send<Demo>({
      topic: 'status',
      schema: 'foundation-demo',
      messages: [{ key: 'doc-9', value: null }],
    });

    const c = collector<Demo>(2);
    let heartbeats = 0;
    const consumer = await messaging.createConsumer({
      groupId: `${t.prefix}g2`,
      topics: ['status'],
      fromBeginning: true,
    });
    await consumer.run<Demo>(async (m, ctx) => {
      await ctx.heartbeat();
      heartbeats += 1;
      await c.handler(m);
    });
    await c.finished;
    expect(c.got.map((m) => m.key)).to.deep.equal(['doc-9', 'doc-9']);
    expect({ ...c.got[0].value }).to.deep.equal(value);
    expect(c.got[1].value).to.equal(null);
    expect(heartbeats).to.equal(2);

    // Checked on the broker through a plain kafkajs admin client, not through @dte/messaging.
    const { Kafka } = await import('kafkajs');
    const admin = new Kafka({ brokers: stack.kafkaBrokers, logLevel: 0 }).admin();
    await admin.connect();
    try {
      const name = messaging.topic('status');
      const meta = await admin.fetchTopicMetadata({ topics: [name] });
      expect(meta.topics[0].partitions).to.have.length(2);
      const cfg = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name, configNames: ['cleanup.policy'] }],
      });
      expect(cfg.resources[0].configEntries[0].configValue).to.equal('compact');
    } finally {
      await admin.disconnect();
    }
  });
  it('hands a value that is not registry-framed Avro to onDecodeError instead of the handler', async () => {
    const { messaging } = t;
    await messaging.ensureTopics([{ name: 'raw', partitions: 1 }]);
    // A foreign producer (plain kafkajs, outside @dte/messaging) writes bytes without the framing.
    const { Kafka } = await import('kafkajs');
    const raw = new Kafka({ brokers: stack.kafkaBrokers, logLevel: 0 }).producer();
    await raw.connect();
    await raw.send({ topic: messaging.topic('raw'), messages: [{ key: 'k', value: 'plain text' }] });
    await raw.disconnect();

    const handled: unknown[] = [];
    let decodeError: { error: Error; offset: string; value: string } | undefined;
    let done!: () => void;
    const seen = new Promise<void>((r) => (done = r));
    const consumer = await messaging.createConsumer({
      groupId: `${t.prefix}g3`,
      topics: ['raw'],
      fromBeginning: true,
      onDecodeError: async (error, m) => {
        decodeError = { error, offset: m.offset, value: m.value.toString() };
        done();
      },
    });
    await consumer.run(async (m) => {
      handled.push(m);
    });
    await seen;
    expect(handled).to.have.length(0);
    expect(decodeError!.value).to.equal('plain text');
    expect(decodeError!.offset).to.equal('0');
    expect(decodeError!.error.message).to.match(/magic|schema|framed|invalid/i);
  });
});
