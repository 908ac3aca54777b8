// kafkajs 2.2.4's request queues re-arm a ~1 ms timer forever once used, even with nothing waiting
// (packages/messaging/src/request-queue-timer.ts): every open broker connection of a process then
// burns CPU, idle or not. With the fix, a queue with nothing pending arms no timer, and requests
// still flow: records produced and consumed through a real broker, before and after a quiet spell.
import { expect } from 'chai';
import { requestQueueTimerFixed } from '@dte/messaging/src/request-queue-timer';
import { countKafkajsCalls } from '../support/kafkajs-calls';
import { testMessaging, type TestMessaging } from '../support/env';
import { demo, until, type FoundationDemo as Demo } from '../support/foundation-demo';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('foundation: kafkajs request queues keep no timer when nothing waits', function () {
  this.timeout(120000);
  let t: TestMessaging;

  before(async function () {
    this.timeout(240000);
    t = await testMessaging('reqqueue');
    await t.messaging.ensureTopics([{ name: 'rq', partitions: 1 }]);
  });
  after(async () => {
    await t?.cleanup();
  });

  it('is installed in kafkajs', () => {
    expect(requestQueueTimerFixed).to.equal(true);
  });

  it('checks its queues a handful of times over a quiet second, not a thousand, and records still flow', async () => {
    const { messaging } = t;
    const seen: string[] = [];
    const consumer = await messaging.createConsumer({
      groupId: `${t.prefix}rq`,
      topics: ['rq'],
      fromBeginning: true,
    });
    const producer = await messaging.createProducer();
    const counter = countKafkajsCalls('kafkajs/src/network/requestQueue', 'checkPendingRequests');
    try {
      await consumer.runBatch<Demo>(async (msgs) => {
        for (const m of msgs) seen.push(m.value!.id);
      });
      await consumer.whenJoined();
      const send = async (from: number) => {
        for (let i = from; i < from + 10; i++)
          await producer.send<Demo>({
            topic: 'rq',
            schema: 'foundation-demo',
            messages: [{ key: 'k', value: demo(i) }],
          });
      };
      await send(0);
      await until(() => seen.length === 10);
      // a quiet second with a producer and a consumer connected: each answered request checks its
      // queue once (the consumer's long-poll, heartbeats); the loop of kafkajs as shipped checks
      // every connection's queue about every millisecond
      const before = counter.count();
      await sleep(1000);
      expect(counter.count() - before).to.be.below(50);
      await send(10);
      await until(() => seen.length === 20);
      expect(seen).to.deep.equal(Array.from({ length: 20 }, (_, i) => `doc-${i}`));
    } finally {
      counter.restore();
      await producer.disconnect();
      await consumer.disconnect();
    }
  });
});
