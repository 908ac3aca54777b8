/**
 * The outbox relay (src/outbox/relay.ts) and the dte-status projector on the real broker and
 * registry, over a migrated schema whose documents the database fixture writes as the emission
 * does (dtes row, queued feed row, queued record in the outbox): a row committed after a later one
 * was published still goes out; a row its schema refuses is set aside without blocking the rows
 * behind it; one relay is active at a time; the consumers' claims and the published rows are purged
 * past their retention, the outbox's oldest ids first without reading the whole table.
 * The api's side (POST /dtes, refresh-status, Prefer: wait): services/api/test/pipeline-projector.test.ts.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { PIPELINE_TOPICS, pipelineTopicSpecs, type IncomingMessage } from '@dte/messaging';
import {
  migratedDatabase,
  testMessaging,
  type MigratedDatabase,
  type TestMessaging,
} from '../../../test/support/env';
import {
  insertCafRow,
  insertCertificateRow,
  insertQueuedDocument,
  insertTenant,
  type Tenant,
} from '../../../test/support/tenant-fixture';
import {
  enqueueOutbox,
  PURGE_PUBLISHED_SQL,
  purgePublishedOutbox,
  startOutboxRelay,
  startProjector,
  statusOutboxEntry,
  type DteStatusRecord,
  type OutboxRelay,
  type Projector,
} from '../src';
import { until } from '../../../test/support/until';

const logger = pino({ level: process.env.API_TEST_LOG ?? 'silent' });

describe('outbox relay and projector on the real broker', function () {
  this.timeout(240_000);
  let db: MigratedDatabase;
  let tm: TestMessaging;
  let relay: OutboxRelay;
  let projector: Projector;
  let o: Tenant;
  let cafId: string;
  let certificateId: string;
  let folio = 0;
  const seen: IncomingMessage<Record<string, unknown>>[] = [];

  const startRelay = (extra: { retainProcessedEventsMs?: number } = {}) =>
    startOutboxRelay({
      dataSource: db.dataSource,
      messaging: tm.messaging,
      logger,
      pollMs: 200,
      lockRetryMs: 300,
      ...extra,
    });

  before(async () => {
    db = await migratedDatabase('outbox_relay');
    tm = await testMessaging('relay');
    await tm.messaging.ensureTopics(pipelineTopicSpecs(3));
    const watcher = await tm.messaging.createConsumer({
      groupId: tm.messaging.topic(`watch-${randomUUID()}`),
      topics: [PIPELINE_TOPICS.status],
      fromBeginning: true,
      maxWaitTimeInMs: 200,
    });
    await watcher.run<Record<string, unknown>>(async (m) => {
      seen.push(m);
    });
    relay = await startRelay();
    projector = await startProjector({ dataSource: db.dataSource, messaging: tm.messaging, logger });
    o = await insertTenant(db.dataSource);
    cafId = await insertCafRow(db.dataSource, o, 33, 1, 1000);
    certificateId = await insertCertificateRow(db.dataSource, o);
  });
  after(async () => {
    await relay?.stop();
    await projector?.stop();
    await tm?.cleanup();
    await db?.cleanup();
  });

  const issue = () =>
    insertQueuedDocument(db.dataSource, o, { tipoDte: 33, folio: ++folio, cafId, certificateId });
  const published = (eventId: string) =>
    until(`record ${eventId} published`, async () =>
      seen.find((m) => m.topic === PIPELINE_TOPICS.status && m.value?.event_id === eventId),
    );
  const siiStatus = async (id: string) =>
    (
      (await db.dataSource.query('SELECT sii_status FROM dtes WHERE id = $1', [id])) as {
        sii_status: string;
      }[]
    )[0]?.sii_status;

  it('publishes an outbox row committed after a later id was already published (no id > last_id gap)', async () => {
    const doc = await issue();
    await published(doc.queuedEventId);
    const slow = db.dataSource.createQueryRunner();
    await slow.connect();
    await slow.startTransaction();
    let early: DteStatusRecord;
    try {
      // the lower id is taken first but committed last
      const e = statusOutboxEntry(
        { id: doc.id, organizationId: o.organizationId, siiEnv: 'cert', tipoDte: 33, folio: doc.folio },
        { siiStatus: 'signed', observedAt: new Date(Date.now() + 100) },
      );
      early = e.payload;
      await enqueueOutbox(slow.manager, [e]);
      const later = await issue(); // commits a higher outbox id at once
      await published(later.queuedEventId);
      await slow.commitTransaction();
    } finally {
      await slow.release();
    }
    const got = await published(early.event_id);
    expect(got.key).to.equal(doc.id);
    await until('signed applied by the projector', async () => (await siiStatus(doc.id)) === 'signed');
  });

  it('sets aside an outbox row its schema refuses, and publishes the rows behind it', async () => {
    const poison = { event_id: randomUUID(), dte_id: 'x', sii_status: 42 }; // not a DteStatusChanged
    await db.dataSource.transaction((m) =>
      enqueueOutbox(m, [
        { topic: PIPELINE_TOPICS.status, schema: 'dte-status', key: 'poison', payload: poison },
      ]),
    );
    const doc = await issue();
    await published(doc.queuedEventId);
    const rows: { failed_at: Date | null; published_at: Date | null; last_error: string | null }[] =
      await db.dataSource.query(
        'SELECT failed_at, published_at, last_error FROM outbox WHERE event_id = $1',
        [poison.event_id],
      );
    expect(rows[0].published_at).to.equal(null);
    expect(rows[0].failed_at).to.be.instanceOf(Date);
    expect(rows[0].last_error).to.be.a('string').and.not.equal('');
  });

  it('keeps one active relay: a second waits on the advisory lock and takes over when the first stops', async () => {
    const second = await startRelay();
    try {
      await new Promise((r) => setTimeout(r, 800));
      expect(relay.isActive()).to.equal(true);
      expect(second.isActive()).to.equal(false);
      await relay.stop();
      await until('the second relay to take the lock', async () => second.isActive());
      const doc = await issue();
      await published(doc.queuedEventId);
      expect(second.published()).to.be.at.least(1);
    } finally {
      relay = second;
    }
  });

  it('is woken by the writers only while it sleeps: an idle relay with a 60 s poll publishes a new row at once', async () => {
    await relay.stop();
    const notifications = async (write: () => Promise<unknown>): Promise<number> => {
      const runner = db.dataSource.createQueryRunner();
      const client = (await runner.connect()) as { on(e: 'notification', f: () => void): void };
      let heard = 0;
      client.on('notification', () => (heard += 1));
      try {
        await runner.query('LISTEN outbox');
        await write();
        await new Promise((r) => setTimeout(r, 300));
        return heard;
      } finally {
        await runner.query('UNLISTEN outbox').catch(() => undefined);
        await runner.release();
      }
    };
    // no relay sleeping: a write notifies nobody (its commit does not take the notify lock)
    expect(await db.dataSource.query('SELECT * FROM outbox_relay_sleeping')).to.deep.equal([]);
    const unheard = await issue();
    expect(await notifications(() => issue())).to.equal(0);
    const idle = await startOutboxRelay({
      dataSource: db.dataSource,
      messaging: tm.messaging,
      logger,
      pollMs: 60_000,
      lockRetryMs: 300,
    });
    try {
      await published(unheard.queuedEventId);
      await until(
        'the relay sleeps',
        async () =>
          ((await db.dataSource.query('SELECT relay FROM outbox_relay_sleeping')) as unknown[]).length > 0,
      );
      const started = Date.now();
      let doc: Awaited<ReturnType<typeof issue>> | undefined;
      expect(await notifications(async () => (doc = await issue()))).to.equal(1);
      await published(doc!.queuedEventId);
      expect(Date.now() - started, 'woken by the notification, not its 60 s poll').to.be.below(10_000);
    } finally {
      await idle.stop();
      relay = await startRelay();
    }
  });

  it('purges published rows past their retention oldest id first, reading the head of the outbox and not the table', async () => {
    const q = db.dataSource;
    // rows in id order: 12 published two days ago, one set aside (never published), 3 published
    // a minute ago, then 2 more published two days ago (late ids: behind the recent ones)
    const tag = `purge-${randomUUID()}`;
    // no relay meanwhile (it would mark rows published ahead of these); the rows the tests above
    // published would be the head: gone first
    await relay.stop();
    await q.query('DELETE FROM outbox WHERE published_at IS NOT NULL');
    // [label, published how long ago, set aside how long ago]
    type Row = [string, string | null, string | null];
    const times = (n: number, row: Row): Row[] => Array.from({ length: n }, () => row);
    const rows: Row[] = [
      ...times(12, ['2 days', '2 days', null]),
      ['set aside', null, '2 days'],
      ...times(3, ['recent', '1 minute', null]),
      ...times(2, ['late id', '2 days', null]),
    ];
    // one statement: its ids follow the rows' order (each connection of the pool caches its own
    // range of the id sequence)
    await q.query(
      `INSERT INTO outbox (topic, schema, message_key, payload, event_id, published_at, failed_at)
       SELECT 'purge.test', 'none', label, '{}'::jsonb, $1 || n, now() - published::interval, now() - failed::interval
         FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS r(label, published, failed, n)
        ORDER BY n`,
      [tag, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
    );
    // chunks of 5: 5 + 5 old, then 2 old and 3 recent (a chunk not all old ends the round)
    await purgePublishedOutbox(q, 24 * 3600 * 1000, 10, 5);
    const left: { message_key: string; n: number }[] = await q.query(
      `SELECT message_key, count(*)::int AS n FROM outbox WHERE topic = 'purge.test'
        GROUP BY message_key ORDER BY message_key`,
    );
    expect(left).to.deep.equal([
      { message_key: 'late id', n: 2 },
      { message_key: 'recent', n: 3 },
      { message_key: 'set aside', n: 1 },
    ]);
    // once the recent rows are past the retention too, the late ids behind them go with them
    await q.query(`UPDATE outbox SET published_at = now() - interval '2 days' WHERE message_key = 'recent'`);
    await purgePublishedOutbox(q, 24 * 3600 * 1000, 10, 5);
    const after: { message_key: string }[] = await q.query(
      `SELECT message_key FROM outbox WHERE topic = 'purge.test'`,
    );
    expect(after.map((r) => r.message_key)).to.deep.equal(['set aside']);

    // 20 000 rows published a minute ago: the statement reads the primary key's head, not the table
    await q.query(
      `INSERT INTO outbox (topic, schema, message_key, payload, event_id, published_at)
       SELECT 'purge.test', 'none', 'bulk', '{"filler": "${'x'.repeat(200)}"}'::jsonb, $1 || g, now() - interval '1 minute'
         FROM generate_series(1, 20000) g`,
      [`${tag}-bulk-`],
    );
    await q.query('ANALYZE outbox');
    const plan: { 'QUERY PLAN': string }[] = await q.query(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${PURGE_PUBLISHED_SQL.replace('$1', "'86400000'").replace('$2', '5000')}`,
    );
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text, text).to.match(/Index Scan using outbox_pkey/);
    expect(text, text).not.to.match(/Seq Scan on outbox/);
    await q.query(`DELETE FROM outbox WHERE topic = 'purge.test'`);
    relay = await startRelay();
  });

  it("purges the consumers' claims past their retention, a chunk at a time, and keeps every recent claim", async () => {
    const q = db.dataSource;
    // the projector claims a record of a worker (not the api's own queued record, which it skips)
    const doc = await issue();
    const sending = statusOutboxEntry(
      { id: doc.id, organizationId: o.organizationId, siiEnv: 'cert', tipoDte: 33, folio: doc.folio },
      { siiStatus: 'sending', trackId: '77', observedAt: new Date(Date.now() + 100) },
    );
    await q.transaction((m) => enqueueOutbox(m, [sending]));
    await until('the projector to claim the record', async () => (await siiStatus(doc.id)) === 'sending');
    // 10 500 claims processed 40 days ago (more than one purge chunk), and the live claims
    await q.query(
      `INSERT INTO processed_events (consumer, event_id, processed_at)
       SELECT 'retention.test', 'old-' || g, now() - interval '40 days' FROM generate_series(1, 10500) g`,
    );
    await q.query(
      `INSERT INTO processed_events (consumer, event_id, processed_at) VALUES ('retention.test', 'recent', now() - interval '29 days')`,
    );
    const live: { n: number }[] = await q.query(
      `SELECT count(*)::int AS n FROM processed_events WHERE consumer <> 'retention.test'`,
    );
    expect(live[0].n, 'the projector claimed the records before').to.be.above(0);
    await relay.stop();
    relay = await startRelay({ retainProcessedEventsMs: 30 * 24 * 3600 * 1000 });
    await until('the claims older than 30 days purged', async () => {
      const [{ n }] = await q.query(
        `SELECT count(*)::int AS n FROM processed_events WHERE consumer = 'retention.test' AND event_id LIKE 'old-%'`,
      );
      return n === 0;
    });
    const kept: { event_id: string }[] = await q.query(
      `SELECT event_id FROM processed_events WHERE consumer = 'retention.test'`,
    );
    expect(kept.map((k) => k.event_id)).to.deep.equal(['recent']);
    const after: { n: number }[] = await q.query(
      `SELECT count(*)::int AS n FROM processed_events WHERE consumer <> 'retention.test'`,
    );
    expect(after[0].n).to.be.at.least(live[0].n);
  });
});
