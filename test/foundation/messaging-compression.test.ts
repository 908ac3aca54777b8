// Producer compression (KAFKA_COMPRESSION, packages/messaging/src/producer.ts) through the real
// broker: by default produce requests are sent plain; with gzip every produce request is
// gzip-compressed (kafkajs' gzip codec is watched, not replaced: what it compresses goes to the
// broker, what the consumer reads back went through its decompression); a consumer reads both
// kinds intact.
import { expect } from 'chai';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { MessagingConfigError, producerCompression, type IncomingMessage } from '@dte/messaging';
import { testMessaging, type TestMessaging } from '../support/env';
import type { FoundationDemo as Demo } from '../support/foundation-demo';

type Codec = { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };

describe('messaging: producer compression (KAFKA_COMPRESSION)', function () {
  this.timeout(120_000);
  let t: TestMessaging;
  const gzip = CompressionCodecs[CompressionTypes.GZIP] as unknown as () => Codec;
  const calls = { compress: 0, decompress: 0, bytesIn: 0, bytesOut: 0 };
  const saved = process.env.KAFKA_COMPRESSION;

  before(async () => {
    t = await testMessaging('compression');
    await t.messaging.ensureTopics([{ name: 'demo', partitions: 1 }]);
    // count what kafkajs' own gzip codec does, passing everything through to it
    (CompressionCodecs as Record<number, () => Codec>)[CompressionTypes.GZIP] = () => {
      const real = gzip();
      return {
        async compress(encoder) {
          calls.compress += 1;
          calls.bytesIn += encoder.buffer.length;
          const out = await real.compress(encoder);
          calls.bytesOut += out.length;
          return out;
        },
        async decompress(buffer) {
          calls.decompress += 1;
          return real.decompress(buffer);
        },
      };
    };
  });
  after(async () => {
    (CompressionCodecs as Record<number, () => Codec>)[CompressionTypes.GZIP] = gzip;
    if (saved === undefined) delete process.env.KAFKA_COMPRESSION;
    else process.env.KAFKA_COMPRESSION = saved;
    await t?.cleanup();
  });

  it('reads none by default, gzip on request, and refuses anything else at start-up', () => {
    expect(producerCompression({})).to.equal(CompressionTypes.None);
    expect(producerCompression({ KAFKA_COMPRESSION: ' GZIP ' })).to.equal(CompressionTypes.GZIP);
    expect(producerCompression({ KAFKA_COMPRESSION: 'none' })).to.equal(CompressionTypes.None);
    expect(() => producerCompression({ KAFKA_COMPRESSION: 'lz4' }))
      .to.throw(MessagingConfigError)
      .with.property('message')
      .that.matches(/KAFKA_COMPRESSION must be none or gzip/);
  });

  const values = (tag: string, n: number): Demo[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `${tag}-${i}`,
      amount: 1000 + i,
      kind: 'SIGNED',
      note: 'Factura electrónica de prueba, la misma glosa en cada documento',
      observed_at: new Date(1763780000000 + i),
    }));

  async function produce(env: string | undefined, tag: string, n: number): Promise<void> {
    if (env === undefined) delete process.env.KAFKA_COMPRESSION;
    else process.env.KAFKA_COMPRESSION = env;
    const producer = await t.messaging.createProducer();
    await producer.send<Demo>({
      topic: 'demo',
      schema: 'foundation-demo',
      messages: values(tag, n).map((v) => ({ key: v.id, value: v })),
    });
    await producer.disconnect();
  }

  it('sends plain batches by default, compresses every produce request with gzip (smaller), and a consumer reads both intact', async () => {
    await produce(undefined, 'plain', 200);
    expect(calls.compress).to.equal(0); // nothing went through the codec

    await produce('gzip', 'gz', 200);
    expect(calls.compress).to.equal(1); // one request, one compressed batch
    expect(calls.bytesOut).to.be.below(calls.bytesIn / 2);

    const got: IncomingMessage<Demo>[] = [];
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const consumer = await t.messaging.createConsumer({
      groupId: `${t.prefix}compression`,
      topics: ['demo'],
      fromBeginning: true,
    });
    await consumer.run(async (m: IncomingMessage<Demo>) => {
      got.push(m);
      if (got.length >= 400) done();
    });
    await all;
    expect(calls.decompress).to.be.at.least(1);
    expect(got.map((m) => ({ ...m.value }))).to.deep.equal([...values('plain', 200), ...values('gz', 200)]);
  });
});
