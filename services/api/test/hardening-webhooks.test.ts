import { MAX_SUBSCRIPTIONS_PER_ORG_ENV } from '@dte/webhooks';
import { expect } from 'chai';

import { call, startTestApi, type TestApi } from './support/test-api';

const PUBLIC_URL = 'https://93.184.216.34/dte-hooks';

describe('webhook subscriptions are capped per organization and environment (over HTTP)', function () {
  this.timeout(300_000);
  let t: TestApi;

  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it(`5 000 registrations from one organization, 32 at a time, leave ${MAX_SUBSCRIPTIONS_PER_ORG_ENV}; the rest answer 400 validation_failed; another organization still registers`, async () => {
    const hostile = await t.seed({ scopes: ['webhook:read', 'webhook:write'] });
    const other = await t.seed({ scopes: ['webhook:read', 'webhook:write'] });
    const ATTEMPTS = 5000;
    const statuses = new Map<number, number>();
    let next = 0;
    let refusal: Record<string, unknown> | undefined;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < ATTEMPTS) {
          const i = next++;
          const res = await call(t.url, 'POST', '/webhooks', {
            key: hostile.api_key,
            json: { url: `${PUBLIC_URL}/${i}`, events: ['dte.accepted'] },
            headers: { 'Idempotency-Key': `flood-${i}` },
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 400) refusal ??= res.body;
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `      ${ATTEMPTS} registrations in ${seconds.toFixed(1)} s: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(statuses.get(201)).to.equal(MAX_SUBSCRIPTIONS_PER_ORG_ENV);
    expect(statuses.get(400)).to.equal(ATTEMPTS - MAX_SUBSCRIPTIONS_PER_ORG_ENV);
    expect(refusal).to.deep.include({ code: 'validation_failed' });
    expect(refusal?.detail).to.deep.equal({
      max: MAX_SUBSCRIPTIONS_PER_ORG_ENV,
      current: MAX_SUBSCRIPTIONS_PER_ORG_ENV,
    });
    const rows = await t.db.dataSource.query(
      'SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = $1',
      [hostile.organization_id],
    );
    expect(rows[0].n).to.equal(MAX_SUBSCRIPTIONS_PER_ORG_ENV);
    const list = await call(t.url, 'GET', '/webhooks', { key: hostile.api_key });
    expect((list.body.webhooks as unknown[]).length).to.equal(MAX_SUBSCRIPTIONS_PER_ORG_ENV);

    // the cap is per organization: another one is not affected
    const res = await call(t.url, 'POST', '/webhooks', {
      key: other.api_key,
      json: { url: PUBLIC_URL, events: ['dte.accepted'] },
      headers: { 'Idempotency-Key': 'other-1' },
    });
    expect(res.status).to.equal(201);
    // deleting one frees a place
    const first = (list.body.webhooks as { id: string }[])[0]!;
    expect((await call(t.url, 'DELETE', `/webhooks/${first.id}`, { key: hostile.api_key })).status).to.equal(
      204,
    );
    const again = await call(t.url, 'POST', '/webhooks', {
      key: hostile.api_key,
      json: { url: PUBLIC_URL, events: ['dte.accepted'] },
      headers: { 'Idempotency-Key': 'after-delete' },
    });
    expect(again.status).to.equal(201);
  });
});

describe('POST /webhooks/:id/test is rate-limited per subscription', function () {
  this.timeout(60_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it('answers 429 rate_limit on the 6th test of one subscription in a minute; another subscription is not affected', async () => {
    const s = await t.seed({ scopes: ['webhook:read', 'webhook:write'] });
    const make = async (k: string) =>
      (
        await call(t.url, 'POST', '/webhooks', {
          key: s.api_key,
          json: { url: `${PUBLIC_URL}/${k}`, events: ['dte.accepted'] },
          headers: { 'Idempotency-Key': k },
        })
      ).body.id as string;
    const a = await make('test-a');
    const b = await make('test-b');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await call(t.url, 'POST', `/webhooks/${a}/test`, { key: s.api_key })).status);
    }
    expect(statuses).to.deep.equal([202, 202, 202, 202, 202, 429]);
    const limited = await call(t.url, 'POST', `/webhooks/${a}/test`, { key: s.api_key });
    expect(limited.body.code).to.equal('rate_limit');
    expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await call(t.url, 'POST', `/webhooks/${b}/test`, { key: s.api_key })).status).to.equal(202);
    const n = await t.db.dataSource.query(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1',
      [a],
    );
    expect(n[0].n).to.equal(5);
  });
});
