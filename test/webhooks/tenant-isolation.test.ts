import { expect } from 'chai';
import crypto, { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { localKeyWrapper } from '@dte/secrets';
import { PIPELINE_TOPICS, pipelineTopicSpecs, type AvroProducer } from '@dte/messaging';
import { migratedDatabase, testMessaging, type MigratedDatabase, type TestMessaging } from '../support/env';
import type { RunningService } from '../../services/webhooks/src/service';
import { createSubscription } from '../../services/webhooks/src/subscriptions';
import type { DteStatusRecord } from '../../services/webhooks/src/ingest';
import { STATUS_DEAD_LETTER_TOPIC, type StatusDeadLetter } from '../../services/webhooks/src/kafka-side';
import type { TestPki } from '../../services/webhooks/test/support/test-ca';
import { Receiver } from '../../services/webhooks/test/support/receiver';
import { startTestWebhooks, type WebhooksService } from '../support/webhooks-service';

const MASTER_KEY = randomBytes(32).toString('base64');
const keys = localKeyWrapper(MASTER_KEY, 'ti1');
const loopback = { policy: { allowLoopback: true } };

/** One webhooks service over real Kafka (dte-status with ONE partition), PostgreSQL and https receivers. */
class Stack {
  db!: MigratedDatabase;
  ds!: DataSource;
  msg!: TestMessaging;
  producer!: AvroProducer;
  webhooks!: WebhooksService;
  pki!: TestPki;
  service!: RunningService;
  private clock = Date.parse('2026-11-24T10:00:00Z');

  async start(label: string, env: Record<string, string>): Promise<void> {
    this.db = await migratedDatabase(label);
    this.ds = this.db.dataSource;
    this.msg = await testMessaging(label);
    await this.msg.messaging.ensureTopics(
      pipelineTopicSpecs(1).filter((t) => t.name === PIPELINE_TOPICS.status),
    );
    this.producer = await this.msg.messaging.createProducer();
    this.webhooks = await startTestWebhooks({
      name: `webhooks-${label}`,
      dataSource: this.ds,
      messaging: this.msg.messaging,
      masterKey: MASTER_KEY,
      masterKeyId: 'ti1',
      env: { WEBHOOKS_RETRY_DELAYS: '30s,30s,30s,30s', ...env },
      logLevel: 'fatal',
    });
    ({ pki: this.pki, service: this.service } = this.webhooks);
  }

  async stop(): Promise<void> {
    await this.webhooks?.close();
    await this.msg?.cleanup();
    await this.db?.cleanup();
  }

  async org(name: string): Promise<string> {
    const [o] = await this.ds.query(`INSERT INTO organizations (name) VALUES ($1) RETURNING id`, [name]);
    return o.id as string;
  }

  async subscribe(orgId: string, url: string, n = 1): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { subscription } = await createSubscription(
        this.ds,
        keys,
        { organizationId: orgId, env: 'cert' },
        { url: `${url}?s=${i}`, events: ['dte.status_changed'], idempotencyKey: `k${i}` },
        loopback,
      );
      ids.push(subscription.id);
    }
    return ids;
  }

  /** one dte-status record per document, each producing a dte.status_changed event */
  async publish(orgId: string, documents: number): Promise<string[]> {
    const records: DteStatusRecord[] = [];
    for (let i = 0; i < documents; i++)
      records.push({
        event_id: crypto.randomUUID(),
        dte_id: crypto.randomUUID(),
        organization_id: orgId,
        sii_env: 'cert',
        tipo_dte: 33,
        folio: 1000 + i,
        sii_status: 'sending',
        sii_glosa: null,
        track_id: null,
        observed_at: new Date((this.clock += 1000)).toISOString(),
        imported: false,
        source: 'tenant-isolation',
      });
    await this.producer.send<DteStatusRecord>({
      topic: PIPELINE_TOPICS.status,
      schema: 'dte-status',
      messages: records.map((r) => ({ key: r.dte_id, value: r })),
    });
    return records.map((r) => r.dte_id);
  }

  async deliveries(orgId: string, state?: string): Promise<number> {
    const [r] = await this.ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE s.organization_id = $1 AND ($2::text IS NULL OR d.state = $2)`,
      [orgId, state ?? null],
    );
    return r.n as number;
  }
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function dataOf(r: { raw: Buffer }): { id: string; data: { dte_id: string } } {
  return JSON.parse(r.raw.toString());
}

describe('webhooks tenant isolation over real Kafka, PostgreSQL and https (issue 18)', function () {
  this.timeout(180_000);

  describe('a dte-status record that keeps failing', () => {
    const s = new Stack();
    let ok: Receiver;
    before(async () => {
      await s.start('wh_dlq', {
        WEBHOOKS_STATUS_MAX_ATTEMPTS: '3',
        WEBHOOKS_STATUS_RETRY_BACKOFF: '50ms',
      });
      ok = await new Receiver(s.pki).start();
    });
    after(async () => {
      await ok?.close();
      await s.stop();
    });

    it('goes to the dead-letter topic after 3 tries, and the records behind it on its partition are delivered', async () => {
      const poisoned = await s.org('Poisoned');
      const healthy = await s.org('Healthy');
      const [poisonSub] = await s.subscribe(poisoned, ok.url('/poisoned'));
      await s.subscribe(healthy, ok.url('/healthy'));
      // one organization's data is broken: every delivery row of its subscription fails to insert
      await s.ds.query(`CREATE FUNCTION ti_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.subscription_id = '${poisonSub}' THEN RAISE EXCEPTION 'broken row of one organization'; END IF;
          RETURN NEW;
        END $$`);
      await s.ds.query(
        `CREATE TRIGGER ti_poison BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION ti_poison()`,
      );
      const dead: StatusDeadLetter[] = [];
      const dlq = await s.msg.messaging.createConsumer({
        groupId: `dlq-reader-${crypto.randomUUID()}`,
        topics: [STATUS_DEAD_LETTER_TOPIC],
        fromBeginning: true,
      });
      await dlq.run<StatusDeadLetter>(async (m) => void (m.value && dead.push(m.value)));
      try {
        // the poison record first, then two healthy ones: all on the single partition
        const [poisonDte] = await s.publish(poisoned, 1);
        const healthyDtes = await s.publish(healthy, 2);

        await ok.waitFor(2, 60_000);
        expect(ok.received.map((r) => r.path.split('?')[0])).to.deep.equal(['/healthy', '/healthy']);
        expect(ok.received.map((r) => dataOf(r).data.dte_id).sort()).to.deep.equal([...healthyDtes].sort());

        await until('the dead letter', () => dead.length >= 1);
        expect(dead).to.have.length(1);
        const letter = dead[0]!;
        expect(letter.dte_id).to.equal(poisonDte);
        expect(letter.organization_id).to.equal(poisoned);
        expect(letter.source_topic).to.equal(PIPELINE_TOPICS.status);
        expect(letter.attempts).to.equal(3);
        expect(letter.error).to.contain('broken row of one organization');
        expect(JSON.parse(letter.record_json).dte_id).to.equal(poisonDte);
        expect(await s.deliveries(poisoned)).to.equal(0);
        await until(
          'both healthy deliveries recorded',
          async () => (await s.deliveries(healthy, 'delivered')) === 2,
        );
        expect(s.service.deadLetters.map((l) => l.dte_id)).to.deep.equal([poisonDte]);
      } finally {
        await dlq.disconnect();
      }
    });
  });

  describe('an organization with a thousand pending deliveries to endpoints that never answer', () => {
    const s = new Stack();
    let hanging: Receiver;
    let ok: Receiver;
    before(async () => {
      await s.start('wh_fair', {
        WEBHOOKS_TIMEOUT: '120s',
        WEBHOOKS_CONCURRENCY: '16',
        WEBHOOKS_ORG_CONCURRENCY: '4',
        WEBHOOKS_ENDPOINT_CONCURRENCY: '4',
        WEBHOOKS_QUEUE_MAX: '5000',
        WEBHOOKS_ORG_QUEUE_SHARE: '300',
      });
      hanging = await new Receiver(s.pki, () => ({ status: 200, delayMs: 600_000 })).start();
      ok = await new Receiver(s.pki).start();
    });
    after(async () => {
      // end the hanging attempts quickly: the endpoints are switched off, then the receiver closes
      await s.ds
        ?.query(
          `UPDATE webhook_subscriptions SET active = false, disabled_at = now(), disabled_reason = 'test_over'`,
        )
        .catch(() => undefined);
      await hanging?.close();
      await ok?.close();
      await s.stop();
    });

    it('holds at most its own share, and another organization is delivered before any of its backlog moves', async () => {
      const noisy = await s.org('Noisy');
      const quiet = await s.org('Quiet');
      await s.subscribe(noisy, hanging.url('/slow'), 20);
      await s.subscribe(quiet, ok.url('/quiet'));
      await s.publish(noisy, 50); // 50 documents x 20 endpoints = 1 000 deliveries
      await until('the noisy backlog recorded', async () => (await s.deliveries(noisy)) === 1000);
      await hanging.waitFor(4, 60_000);
      const q = s.service.runner.queue;
      await until('the noisy share filled', () => q.orgLoad(noisy).waiting === 300);

      await s.publish(quiet, 1);
      await ok.waitFor(1, 60_000);

      // the noisy organization never held more than its 4 slots: 12 of 16 stayed free for others
      expect(hanging.received).to.have.length(4);
      expect(q.orgLoad(noisy)).to.deep.equal({ running: 4, waiting: 300 });
      // the other 700 stay pending in PostgreSQL (not in memory) for the sweep
      expect(s.service.runner.refused).to.be.greaterThan(0);
      expect(await s.deliveries(noisy, 'pending')).to.equal(1000);
      await until('the quiet delivery recorded', async () => (await s.deliveries(quiet, 'delivered')) === 1);
      expect(s.service.paused).to.equal(false);
    });
  });

  describe('an organization whose backlog outgrows its share while its endpoint answers', () => {
    const s = new Stack();
    let fast: Receiver;
    before(async () => {
      await s.start('wh_refill', {
        WEBHOOKS_TIMEOUT: '10s',
        WEBHOOKS_CONCURRENCY: '8',
        WEBHOOKS_ORG_CONCURRENCY: '8',
        WEBHOOKS_ENDPOINT_CONCURRENCY: '4',
        WEBHOOKS_QUEUE_MAX: '1000',
        WEBHOOKS_ORG_QUEUE_SHARE: '20',
        // the overdue sweep does not run during the test: only the refill can take the refused back
        WEBHOOKS_SWEEP_INTERVAL: '1h',
      });
      fast = await new Receiver(s.pki, () => ({ status: 200, delayMs: 5 })).start();
    });
    after(async () => {
      await fast?.close();
      await s.stop();
    });

    it('takes its refused deliveries back from PostgreSQL as its share frees, not at the sweep’s pace, each once', async () => {
      const org = await s.org('Burst');
      await s.subscribe(org, fast.url('/burst'));
      const dtes = await s.publish(org, 300); // 300 deliveries to one endpoint, 15 times the share
      await until('the burst recorded', async () => (await s.deliveries(org)) === 300);
      await fast.waitFor(300, 30_000);
      await until(
        'every delivery recorded as delivered',
        async () => (await s.deliveries(org, 'delivered')) === 300,
      );
      await new Promise((r) => setTimeout(r, 500)); // nothing more may arrive (no duplicates)

      expect(s.service.runner.refused, 'attempts refused beyond the share').to.be.greaterThan(0);
      expect(s.service.runner.queue.peakWaiting).to.be.at.most(20);
      const got = fast.received.map((r) => dataOf(r).data.dte_id);
      expect(got).to.have.length(300);
      expect(new Set(got)).to.deep.equal(new Set(dtes));
      expect(s.service.runner.backlogged).to.deep.equal([]);
    });
  });

  describe('a queue that fills up', () => {
    const s = new Stack();
    let slow: Receiver;
    before(async () => {
      await s.start('wh_pause', {
        WEBHOOKS_TIMEOUT: '10s',
        WEBHOOKS_CONCURRENCY: '8',
        WEBHOOKS_ORG_CONCURRENCY: '8',
        WEBHOOKS_ENDPOINT_CONCURRENCY: '4',
        WEBHOOKS_QUEUE_MAX: '60',
        WEBHOOKS_ORG_QUEUE_SHARE: '60',
        WEBHOOKS_FIRST_ATTEMPT_GRACE: '300ms',
      });
      slow = await new Receiver(s.pki, () => ({ status: 200, delayMs: 40 })).start();
    });
    after(async () => {
      await slow?.close();
      await s.stop();
    });

    it('pauses the consumers, holds at most its bound in memory, resumes when drained, and delivers every event exactly once', async () => {
      const org = await s.org('Bulk');
      await s.subscribe(org, slow.url('/bulk'), 10);
      await s.publish(org, 30); // 300 deliveries
      await slow.waitFor(300, 120_000);
      await until(
        'every delivery recorded as delivered',
        async () => (await s.deliveries(org, 'delivered')) === 300,
      );
      await until('the queue drained', () => s.service.runner.queue.size === 0);
      await new Promise((r) => setTimeout(r, 1000)); // nothing more may arrive (no duplicates)

      const ids = slow.received.map((r) => `${r.path}:${dataOf(r).id}`);
      expect(ids).to.have.length(300);
      expect(new Set(ids).size).to.equal(300);
      expect(s.service.pauses).to.be.greaterThan(0);
      expect(s.service.paused).to.equal(false);
      expect(s.service.runner.queue.peakWaiting).to.be.at.most(60);
      expect(await s.deliveries(org)).to.equal(300);
    });
  });
});
