import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import type { DataSource } from 'typeorm';
import { randomBytes } from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import { PIPELINE_TOPICS, pipelineTopicSpecs, type AvroProducer } from '@dte/messaging';
import { migratedDatabase, testMessaging, type MigratedDatabase, type TestMessaging } from '../support/env';
import type { RunningService } from '../../services/webhooks/src/service';
import {
  createSubscription,
  enqueueTestDelivery,
  getSubscription,
} from '../../services/webhooks/src/subscriptions';
import type { DteStatusRecord } from '../../services/webhooks/src/ingest';
import { Receiver } from '../../services/webhooks/test/support/receiver';
import type { SmtpSink } from '../../services/webhooks/test/support/smtp';
import { startTestWebhooks, type WebhooksService } from '../support/webhooks-service';

function opensslHmac(secret: string, t: string, raw: Buffer): string {
  const out = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret], {
    input: Buffer.concat([Buffer.from(`${t}.`), raw]),
  });
  return /([0-9a-f]{64})\s*$/.exec(out.stdout.toString())![1]!;
}

function checkSignature(secret: string, headers: Record<string, unknown>, raw: Buffer): void {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(headers['service-signature']));
  expect(m, 'Service-Signature header').to.not.equal(null);
  expect(opensslHmac(secret, m![1]!, raw), 'HMAC by openssl').to.equal(m![2]);
}

const DELAYS = [300, 600, 900, 1200];

/** the service opens with MASTER_KEY what the test seals here, as it opens what the api seals */
const MASTER_KEY = randomBytes(32).toString('base64');
const keys = localKeyWrapper(MASTER_KEY, 'e2e1');

describe('webhooks end to end: dte-status on the real broker to an https receiver', function () {
  this.timeout(120_000);
  let db: MigratedDatabase;
  let msg: TestMessaging;
  let ds: DataSource;
  let producer: AvroProducer;
  let webhooks: WebhooksService;
  let service: RunningService;
  let smtp: SmtpSink;
  let ok: Receiver;
  let failing: Receiver;
  let orgId: string;

  before(async () => {
    db = await migratedDatabase('webhooks_e2e');
    ds = db.dataSource;
    msg = await testMessaging('webhooks');
    await msg.messaging.ensureTopics(pipelineTopicSpecs(2).filter((t) => t.name === PIPELINE_TOPICS.status));
    producer = await msg.messaging.createProducer();
    const [org] = await ds.query(`INSERT INTO organizations (name) VALUES ('E2E') RETURNING id`);
    orgId = org.id;
    const [user] = await ds.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [
      `duena-${org.id}@empresa.test`,
    ]);
    await ds.query(`INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`, [
      user.id,
      orgId,
    ]);
    webhooks = await startTestWebhooks({
      name: 'webhooks-e2e',
      dataSource: ds,
      messaging: msg.messaging,
      masterKey: MASTER_KEY,
      masterKeyId: 'e2e1',
      env: {
        WEBHOOKS_RETRY_DELAYS: DELAYS.map((d) => `${d}ms`).join(','),
        WEBHOOKS_TIMEOUT: '2s',
        WEBHOOKS_RETRY_GRACE: '30s',
        WEBHOOKS_RETRY_PARTITIONS: '2',
        MAIL_FROM: 'webhooks@dte.test',
      },
    });
    ({ service, smtp } = webhooks);
    ok = await new Receiver(webhooks.pki).start();
    failing = await new Receiver(webhooks.pki, () => ({ status: 500 })).start();
  });

  after(async () => {
    await webhooks?.close();
    await ok?.close();
    await failing?.close();
    await msg?.cleanup();
    await db?.cleanup();
  });

  const publish = async (records: DteStatusRecord[]) => {
    await producer.send<DteStatusRecord>({
      topic: PIPELINE_TOPICS.status,
      schema: 'dte-status',
      messages: records.map((r) => ({ key: r.dte_id, value: r })),
    });
  };
  let clock = Date.parse('2026-11-22T04:00:00Z');
  const record = (
    dteId: string,
    sii_status: string,
    over: Partial<DteStatusRecord> = {},
  ): DteStatusRecord => ({
    event_id: crypto.randomUUID(),
    dte_id: dteId,
    organization_id: orgId,
    sii_env: 'cert',
    tipo_dte: 33,
    folio: 4242,
    sii_status,
    sii_glosa: null,
    track_id: null,
    observed_at: new Date((clock += 1000)).toISOString(),
    imported: false,
    source: 'e2e',
    ...over,
  });

  it('delivers every event of an emission, each with a signature openssl accepts', async () => {
    const all = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'] as const;
    const loopback = { policy: { allowLoopback: true } };
    const { subscription: s, secret: sSecret } = await createSubscription(
      ds,
      keys,
      { organizationId: orgId, env: 'cert' },
      { url: ok.url('/in'), events: [...all], idempotencyKey: 'ok' },
      loopback,
    );
    // another environment's subscription hears nothing
    await createSubscription(
      ds,
      keys,
      { organizationId: orgId, env: 'prod' },
      { url: ok.url('/prod'), events: [...all], idempotencyKey: 'prod' },
      loopback,
    );
    const dte = crypto.randomUUID();
    const imported = crypto.randomUUID();
    await publish([
      record(dte, 'queued'),
      record(dte, 'signed'),
      record(dte, 'sending'),
      record(dte, 'SOK', { track_id: '7000001' }),
      record(dte, 'EPR', { track_id: '7000001' }),
      record(imported, 'accepted', { imported: true, track_id: '1' }),
    ]);
    await ok.waitFor(5, 30_000);
    await new Promise((r) => setTimeout(r, 1500)); // nothing more may arrive
    expect(ok.received).to.have.length(5);
    const got = ok.received.map((r) => {
      checkSignature(sSecret!, r.headers, r.raw);
      expect(r.path).to.equal('/in');
      const e = JSON.parse(r.raw.toString());
      return `${e.data.sii_status}:${e.type}`;
    });
    expect(got.sort()).to.deep.equal(
      [
        'EPR:dte.accepted',
        'EPR:dte.status_changed',
        'SOK:dte.emitted',
        'SOK:dte.status_changed',
        'sending:dte.status_changed',
      ].sort(),
    );
    const [n] = await ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'delivered'`,
      [s.id],
    );
    expect(n.n).to.equal(5);
  });

  it('a test delivery reaches the receiver; a failing endpoint gets five attempts per event on the tiers, then is deactivated and the owner is e-mailed', async () => {
    const loopback = { policy: { allowLoopback: true } };
    const scope = { organizationId: orgId, env: 'cert' as const };
    const { subscription: bad } = await createSubscription(
      ds,
      keys,
      scope,
      { url: failing.url('/down'), events: ['dte.rejected'], idempotencyKey: 'bad' },
      loopback,
    );
    const { subscription: good, secret: goodSecret } = await createSubscription(
      ds,
      keys,
      scope,
      { url: ok.url('/test'), events: ['dte.rejected'], idempotencyKey: 'good' },
      loopback,
    );

    const metricsBefore = await deliveryMetrics();
    const before = ok.received.length;
    const okBefore = ok.received.length;
    const t = await enqueueTestDelivery(ds, scope, good.id, { now: Date.now });
    await ok.waitFor(before + 1, 10_000);
    const testEvent = ok.received[before]!;
    checkSignature(goodSecret!, testEvent.headers, testEvent.raw);
    expect(JSON.parse(testEvent.raw.toString())).to.deep.include({
      id: t.event_id,
      type: 'dte.status_changed',
    });

    const docs = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await publish(docs.map((d) => record(d, 'RCH', { track_id: '99' })));
    await failing.waitFor(15, 60_000);
    await new Promise((r) => setTimeout(r, 2000));
    expect(failing.received).to.have.length(15);
    // per event, the attempts come on the configured schedule
    const byEvent = new Map<string, number[]>();
    for (const r of failing.received) {
      const id = JSON.parse(r.raw.toString()).id as string;
      byEvent.set(id, [...(byEvent.get(id) ?? []), r.at]);
    }
    expect(byEvent.size).to.equal(3);
    for (const times of byEvent.values()) {
      expect(times).to.have.length(5);
      times.slice(1).forEach((t2, i) => expect(t2 - times[i]!).to.be.at.least(DELAYS[i]! - 5));
    }
    const after = await getSubscription(ds, scope, bad.id);
    expect(after.active).to.equal(false);
    expect(after.disabled_at).to.be.instanceOf(Date);
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.mails).to.have.length(1);
    expect(smtp.mails[0]!.to).to.deep.equal([`duena-${orgId}@empresa.test`]);
    // the healthy endpoint got its three rejections meanwhile
    const rejected = ok.received.filter(
      (r) => r.path === '/test' && JSON.parse(r.raw.toString()).type === 'dte.rejected',
    );
    expect(rejected).to.have.length(3);
    // /metrics of the service counted each attempt by outcome: delivered, one per request the
    // healthy receiver got meanwhile (the test event, the rejections to every subscription);
    // 3 events x 4 failed attempts followed by another; 3 given up
    const metricsAfter = await deliveryMetrics();
    const delta = (outcome: string) => (metricsAfter[outcome] ?? 0) - (metricsBefore[outcome] ?? 0);
    expect({
      delivered: delta('delivered'),
      retry: delta('retry'),
      exhausted: delta('exhausted'),
    }).to.deep.equal({
      delivered: ok.received.length - okBefore,
      retry: 12,
      exhausted: 3,
    });
  });

  /** dte_webhook_deliveries_total by outcome, read from the service's GET /metrics. */
  async function deliveryMetrics(): Promise<Record<string, number>> {
    const res = await fetch(`http://127.0.0.1:${service.healthPort}/metrics`);
    expect(res.status).to.equal(200);
    const out: Record<string, number> = {};
    for (const m of (await res.text()).matchAll(/^dte_webhook_deliveries_total\{outcome="(\w+)"\} (\d+)$/gm))
      out[m[1]!] = Number(m[2]);
    return out;
  }
});
