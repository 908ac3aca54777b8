import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { PIPELINE_TOPICS, pipelineTopicSpecs, type AvroProducer } from '@dte/messaging';
import { testMessaging, type TestMessaging } from '../support/env';
import { call, startTestApi, type TestApi } from '../../services/api/test/support/test-api';
import type { DteStatusRecord } from '../../services/webhooks/src/ingest';
import { Receiver, type Received } from '../../services/webhooks/test/support/receiver';
import { allowLoopbackReceivers, startTestWebhooks, type WebhooksService } from '../support/webhooks-service';

function opensslHmac(secret: string, t: string, raw: Buffer): string {
  const out = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret], {
    input: Buffer.concat([Buffer.from(`${t}.`), raw]),
  });
  return /([0-9a-f]{64})\s*$/.exec(out.stdout.toString())![1]!;
}

function signedWith(secret: string, r: Received): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['service-signature']));
  return m !== null && opensslHmac(secret, m[1]!, r.raw) === m[2];
}

const ALL = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'];

describe('webhooks through the api: register, test, rotate and delete over HTTP, events from the broker', function () {
  this.timeout(120_000);
  let t: TestApi;
  let msg: TestMessaging;
  let producer: AvroProducer;
  let webhooks: WebhooksService;
  let rx: Receiver;
  let key: string;
  let orgId: string;
  let restoreEnv: () => void;

  before(async () => {
    // the test-only loopback setting, honoured because NODE_ENV=test (restored afterwards)
    restoreEnv = allowLoopbackReceivers();
    t = await startTestApi();
    const seeded = await t.seed({ scopes: ['webhook:read', 'webhook:write'] });
    key = seeded.api_key;
    orgId = seeded.organization_id;
    msg = await testMessaging('webhooks_api');
    await msg.messaging.ensureTopics(pipelineTopicSpecs(2).filter((s) => s.name === PIPELINE_TOPICS.status));
    producer = await msg.messaging.createProducer();
    // the api's database and master key: the service opens the secrets the api sealed
    webhooks = await startTestWebhooks({
      name: 'webhooks-api-e2e',
      api: t,
      messaging: msg.messaging,
      env: { WEBHOOKS_FIRST_ATTEMPT_GRACE: '100ms' },
    });
    rx = await new Receiver(webhooks.pki).start();
  });

  after(async () => {
    await webhooks?.close();
    await rx?.close();
    await msg?.cleanup();
    await t?.close();
    restoreEnv?.();
  });

  let at = Date.parse('2026-11-22T05:00:00Z');
  const publish = (records: Partial<DteStatusRecord>[]) =>
    producer.send<DteStatusRecord>({
      topic: PIPELINE_TOPICS.status,
      schema: 'dte-status',
      messages: records.map((r) => {
        const value: DteStatusRecord = {
          event_id: crypto.randomUUID(),
          dte_id: r.dte_id!,
          organization_id: orgId,
          sii_env: 'cert',
          tipo_dte: 34,
          folio: 10,
          sii_status: r.sii_status!,
          sii_glosa: null,
          track_id: r.track_id ?? null,
          observed_at: new Date((at += 1000)).toISOString(),
          imported: false,
          source: 'api-e2e',
        };
        return { key: value.dte_id, value };
      }),
    });

  it('delivers the test event and every event of an emission, signed with the current secret only', async () => {
    const created = await call(t.url, 'POST', '/webhooks', {
      key,
      json: { url: rx.url('/hooks'), events: ALL },
      headers: { 'Idempotency-Key': 'api-e2e-1' },
    });
    expect(created.status).to.equal(201);
    const id = created.body.id as string;
    const secret = created.body.secret as string;

    const test = await call(t.url, 'POST', `/webhooks/${id}/test`, { key });
    expect(test.status).to.equal(202);
    await rx.waitFor(1, 15_000);
    expect(JSON.parse(rx.received[0]!.raw.toString())).to.deep.include({ id: test.body.event_id });
    expect(signedWith(secret, rx.received[0]!)).to.equal(true);

    const dte = crypto.randomUUID();
    await publish([
      { dte_id: dte, sii_status: 'sending' },
      { dte_id: dte, sii_status: '-11', track_id: '555' },
      { dte_id: dte, sii_status: 'RPR', track_id: '555' },
    ]);
    await rx.waitFor(6, 30_000);
    const types = rx.received.slice(1).map((r) => JSON.parse(r.raw.toString()).type as string);
    expect(types.sort()).to.deep.equal(
      [
        'dte.accepted',
        'dte.emitted',
        'dte.status_changed',
        'dte.status_changed',
        'dte.status_changed',
      ].sort(),
    );
    for (const r of rx.received) expect(signedWith(secret, r)).to.equal(true);

    const rotated = await call(t.url, 'POST', `/webhooks/${id}/rotate-secret`, { key });
    expect(rotated.status).to.equal(200);
    const fresh = rotated.body.secret as string;
    await call(t.url, 'POST', `/webhooks/${id}/test`, { key });
    await rx.waitFor(7, 15_000);
    const last = rx.received[6]!;
    expect(signedWith(fresh, last)).to.equal(true);
    expect(signedWith(secret, last)).to.equal(false);

    expect((await call(t.url, 'DELETE', `/webhooks/${id}`, { key })).status).to.equal(204);
    await publish([{ dte_id: crypto.randomUUID(), sii_status: 'RCH', track_id: '556' }]);
    await new Promise((r) => setTimeout(r, 2500));
    expect(rx.received).to.have.length(7);
  });
});
