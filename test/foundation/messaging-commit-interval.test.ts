// commitIntervalMs: a consumer whose handler dedupes commits its offsets at most once per interval
// instead of after every batch; what it handled is committed before the lag is read
// (commitPending) and before it leaves (disconnect), so a consumer of the same group that starts
// afterwards does not see those messages again. Against the real broker.
import { expect } from 'chai';
import type { IncomingMessage } from '@dte/messaging';
import { testMessaging, testStack, type TestMessaging, type TestStack } from '../support/env';
import { demo, until, type FoundationDemo as Demo } from '../support/foundation-demo';

/** The group's committed offsets of the topic, partition → offset (-1: none), from the broker. */
async function committed(stack: TestStack, groupId: string, topic: string): Promise<Record<number, string>> {
  const { Kafka } = await import('kafkajs');
  const admin = new Kafka({ brokers: stack.kafkaBrokers, logLevel: 0 }).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return Object.fromEntries(t!.partitions.map((p) => [p.partition, p.offset]));
  } finally {
    await admin.disconnect();
  }
}

describe('foundation: consumer offsets committed at an interval (commitIntervalMs)', function () {
  this.timeout(90000);
  let stack: TestStack;
  let t: TestMessaging;

  before(async function () {
    this.timeout(240000);
    stack = await testStack();
    t = await testMessaging('commitiv');
  });
  after(async () => {
    await t?.cleanup();
  });

  it('commits what was handled before the lag is read and on disconnect, never re-delivering it to the next member', async () => {
    const { messaging } = t;
    await messaging.ensureTopics([{ name: 'paced', partitions: 1 }]);
    const topic = messaging.topic('paced');
    const groupId = `${t.prefix}paced`;
    const producer = await messaging.createProducer();
    const send = (from: number, n: number) =>
      producer.send<Demo>({
        topic: 'paced',
        schema: 'foundation-demo',
        messages: Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: demo(from + i) })),
      });

    await send(0, 5);
    const seen: string[] = [];
    const first = await messaging.createConsumer({
      groupId,
      topics: ['paced'],
      fromBeginning: true,
      commitIntervalMs: 3_600_000, // no commit by time during this test
    });
    await first.runBatch<Demo>(async (msgs: IncomingMessage<Demo>[]) => {
      for (const m of msgs) seen.push(m.value!.id);
    });
    await until(() => seen.length === 5);
    await send(5, 5);
    await until(() => seen.length === 10);
    const before = await committed(stack, groupId, topic);
    expect(Number(before[0]), 'handled but not committed yet').to.be.lessThan(10);
    await first.commitPending();
    expect((await committed(stack, groupId, topic))[0]).to.equal('10');

    await send(10, 3);
    await until(() => seen.length === 13);
    await first.disconnect();
    expect((await committed(stack, groupId, topic))[0], 'committed on disconnect').to.equal('13');

    const again: string[] = [];
    const second = await messaging.createConsumer({ groupId, topics: ['paced'], fromBeginning: true });
    await second.runBatch<Demo>(async (msgs) => {
      for (const m of msgs) again.push(m.value!.id);
    });
    await send(13, 1);
    await until(() => again.length >= 1);
    expect(again, 'the next member starts after what the first handled').to.deep.equal(['doc-13']);
    expect(seen).to.deep.equal(Array.from({ length: 13 }, (_, i) => `doc-${i}`));
  });
});
