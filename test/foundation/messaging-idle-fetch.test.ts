// Idle long-poll (packages/messaging/src/idle-fetch.ts): a consumer that batches under load
// (minBytes 16 KiB, maxWaitTimeInMs 50, the signer's and projector's settings) sends a fetch per
// idle wait, not one per 50 ms, while nothing comes; a record produced into the quiet topic still
// arrives, and records keep arriving in order, one handler call per fetched batch. Fetch requests
// are counted at kafkajs' broker client (every request this process sends), against the real broker.
import { expect } from 'chai';
import { idleFetchInstalled } from '@dte/messaging/src/idle-fetch';
import { countKafkajsCalls } from '../support/kafkajs-calls';
import { testMessaging, type TestMessaging } from '../support/env';
import { demo, until, type FoundationDemo as Demo } from '../support/foundation-demo';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('foundation: an idle consumer long-polls (idleWaitTimeInMs)', function () {
  this.timeout(120000);
  let t: TestMessaging;

  before(async function () {
    this.timeout(240000);
    t = await testMessaging('idlefetch');
    await t.messaging.ensureTopics([{ name: 'quiet', partitions: 2 }]);
  });
  after(async () => {
    await t?.cleanup();
  });

  it('is installed in kafkajs (else consumers would silently poll every maxWaitTimeInMs)', () => {
    expect(idleFetchInstalled).to.equal(true);
  });

  /** fetches sent by a 16 KiB / 50 ms consumer over 3 s of a quiet topic, and what it then receives */
  async function quietThenSend(idleWaitTimeInMs: number | undefined, from: number) {
    const { messaging } = t;
    const seen: string[] = [];
    let calls = 0;
    const consumer = await messaging.createConsumer({
      groupId: `${t.prefix}quiet-${from}`,
      topics: ['quiet'],
      fromBeginning: false,
      minBytes: 16 * 1024,
      maxWaitTimeInMs: 50,
      ...(idleWaitTimeInMs === undefined ? {} : { idleWaitTimeInMs }),
    });
    const counter = countKafkajsCalls('kafkajs/src/broker', 'fetch');
    try {
      await consumer.runBatch<Demo>(async (msgs) => {
        calls += 1;
        for (const m of msgs) seen.push(m.value!.id);
      });
      await consumer.whenJoined();
      await sleep(1000);
      const before = counter.count();
      await sleep(3000);
      const idleFetches = counter.count() - before;
      const producer = await messaging.createProducer();
      const ids = Array.from({ length: 20 }, (_, i) => from + i);
      // one key: one partition, so the order is the send order
      for (const i of ids)
        await producer.send<Demo>({
          topic: 'quiet',
          schema: 'foundation-demo',
          messages: [{ key: 'k', value: demo(i) }],
        });
      await until(() => seen.length === ids.length);
      return { idleFetches, seen, expected: ids.map((i) => `doc-${i}`), calls };
    } finally {
      counter.restore();
      await consumer.disconnect();
    }
  }

  it('sends a few fetches a second while idle instead of twenty, and still receives every record in order', async () => {
    const longPoll = await quietThenSend(undefined, 0);
    expect(longPoll.seen).to.deep.equal(longPoll.expected);
    // 3 s with the default idle wait of 1 s: 3-4 fetches (without it: one per 50 ms, ~60)
    expect(longPoll.idleFetches).to.be.within(1, 8);

    const polling = await quietThenSend(0, 100);
    expect(polling.seen).to.deep.equal(polling.expected);
    expect(polling.idleFetches).to.be.greaterThan(20);
  });
});
