// The backlog metrics move when work waits, as an operator's alert needs them to: the outbox gauges
// (dte_outbox_depth, dte_outbox_oldest_age_seconds) count the rows the relay has still to publish
// and their age, and dte_kafka_consumer_lag{group,topic} counts the messages a consumer group has
// not consumed yet, then falls back to 0 once it catches up. (metrics.test.ts sees them at rest,
// at 0, after a full run; 0 is also what a gauge shows when nothing ever set it.) Real PostgreSQL,
// real broker and registry, read through GET /metrics of a real health server.
import { randomUUID } from 'node:crypto';

import { expect } from 'chai';

import { PIPELINE_TOPICS, pipelineTopicSpecs } from '@dte/messaging';
import { startHealthServer, type HealthServer } from '@dte/service-runtime';

import { reportOutboxMetrics } from '@dte/pipeline';
import { migratedDatabase, testMessaging, type MigratedDatabase, type TestMessaging } from '../support/env';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The value of one sample of the Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('metrics: the outbox and consumer-lag gauges follow a backlog and its draining', function () {
  this.timeout(120_000);
  let db: MigratedDatabase;
  let msg: TestMessaging;
  let health: HealthServer;
  const stops: (() => void)[] = [];
  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${health.port}/metrics`);
    expect(res.status).to.equal(200);
    return res.text();
  };

  before(async () => {
    db = await migratedDatabase('metrics_backlog');
    msg = await testMessaging('mbacklog');
    health = await startHealthServer(0);
  });
  after(async () => {
    for (const stop of stops) stop();
    await health?.close();
    await msg?.cleanup();
    await db?.cleanup();
  });

  it('dte_outbox_depth and dte_outbox_oldest_age_seconds count the unpublished rows, not the published or set-aside ones', async () => {
    stops.push(reportOutboxMetrics(db.dataSource));
    const insert = (ageSec: number, extra = '') =>
      db.dataSource.query(
        `INSERT INTO outbox (topic, schema, message_key, payload, event_id, created_at${extra ? `, ${extra}` : ''})
         VALUES ('dte-status', 'dte-status', NULL, '{}'::jsonb, $1, now() - make_interval(secs => $2)${extra ? ', now()' : ''})`,
        [randomUUID(), ageSec],
      );
    expect(sample(await scrape(), 'dte_outbox_depth')).to.equal(0);
    await insert(40);
    await insert(5);
    await insert(3);
    await insert(900, 'published_at'); // already on Kafka
    await insert(1200, 'failed_at'); // set aside by the relay (its own error log)
    const text = await scrape();
    expect(sample(text, 'dte_outbox_depth')).to.equal(3);
    const age = sample(text, 'dte_outbox_oldest_age_seconds')!;
    expect(age, 'the oldest waiting row, 40 s old').to.be.within(40, 100);
    // the relay publishes them: the gauges fall back
    await db.dataSource.query(
      'UPDATE outbox SET published_at = now() WHERE published_at IS NULL AND failed_at IS NULL',
    );
    const after = await scrape();
    expect([sample(after, 'dte_outbox_depth'), sample(after, 'dte_outbox_oldest_age_seconds')]).to.deep.equal(
      [0, 0],
    );
  });

  it('dte_kafka_consumer_lag counts what a group has not consumed, per group and topic, then 0 once it caught up', async () => {
    const m = msg.messaging;
    await m.ensureTopics(pipelineTopicSpecs(2).filter((t) => t.name === PIPELINE_TOPICS.status));
    const producer = await m.createProducer();
    const value = (i: number) => ({
      event_id: randomUUID(),
      dte_id: randomUUID(),
      organization_id: randomUUID(),
      sii_env: 'cert',
      tipo_dte: 33,
      folio: i,
      sii_status: 'queued',
      sii_glosa: null,
      track_id: null,
      observed_at: new Date().toISOString(),
      imported: false,
      source: 'api',
    });
    await producer.send({
      topic: PIPELINE_TOPICS.status,
      schema: 'dte-status',
      messages: Array.from({ length: 7 }, (_, i) => ({ key: `k${i}`, value: value(i) })),
    });
    // a consumer whose handler holds the first message it gets: nothing is committed yet
    const group = m.topic(`lag-${randomUUID().slice(0, 8)}`);
    const consumer = await m.createConsumer({
      groupId: group,
      topics: [PIPELINE_TOPICS.status],
      fromBeginning: true,
      maxWaitTimeInMs: 200,
    });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let seen = 0;
    await consumer.run(async () => {
      seen += 1;
      if (seen === 1) await held;
    });
    const lag = async () =>
      sample(await scrape(), 'dte_kafka_consumer_lag', { group, topic: PIPELINE_TOPICS.status });
    for (let i = 0; seen === 0; i++) {
      if (i > 200) throw new Error('the consumer got no message in 40 s');
      await sleep(200);
    }
    expect(await lag(), 'all 7 waiting while the first is held').to.equal(7);
    release();
    let now = await lag();
    for (let i = 0; now !== 0 && i < 100; i++) {
      await sleep(200);
      now = await lag();
    }
    expect(now, 'caught up').to.equal(0);
    expect(seen).to.equal(7);
  });
});
