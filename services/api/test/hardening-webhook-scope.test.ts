import { expect } from 'chai';
import crypto, { randomBytes } from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import { createSubscription } from '@dte/webhooks';
import { ingestStatus } from '../../webhooks/src/ingest';
import { PgWebhookStore } from '../../webhooks/src/pg-store';
import { body, emit, orgWithCafs } from './dtes-fixtures';
import { call, newRut, startTestApi, type TestApi } from './support/test-api';

// An IP literal is public without DNS (the test machine has no resolver for public names).
const PUBLIC_URL = 'https://93.184.216.34/dte-hooks';
const scopes = ['webhook:read', 'webhook:write'] as const;

describe('company scope for webhooks (issue 18, real PostgreSQL, over HTTP)', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  const register = (key: string, url: string, idem: string) =>
    call(t.url, 'POST', '/webhooks', {
      key,
      json: { url, events: ['dte.status_changed'] },
      headers: { 'Idempotency-Key': idem },
    });
  const ids = async (key: string) =>
    ((await call(t.url, 'GET', '/webhooks', { key })).body.webhooks as { id: string }[]).map((w) => w.id);

  it("a company-scoped key sees and manages only its company's subscriptions; the same Idempotency-Key makes one per company", async () => {
    const org = `wh-scope-${Date.now()}`;
    const a = await t.seed({ org, rut: newRut(), scopes: [...scopes] });
    const b = await t.seed({ org, rut: newRut(), scopes: [...scopes] });
    expect(b.organization_id).to.equal(a.organization_id);

    const ra = await register(a.api_key, `${PUBLIC_URL}/a`, 'same-key');
    const rb = await register(b.api_key, `${PUBLIC_URL}/b`, 'same-key');
    expect(ra.status, ra.text).to.equal(201);
    expect(rb.status, rb.text).to.equal(201);
    const idA = (ra.body as { id: string }).id;
    const idB = (rb.body as { id: string }).id;
    expect(idA).to.not.equal(idB);

    expect(await ids(a.api_key)).to.deep.equal([idA]);
    expect(await ids(b.api_key)).to.deep.equal([idB]);
    // another company's subscription answers like a missing one, and nothing changes
    for (const [method, path] of [
      ['POST', `/webhooks/${idB}/rotate-secret`],
      ['POST', `/webhooks/${idB}/test`],
      ['DELETE', `/webhooks/${idB}`],
    ] as const) {
      const res = await call(t.url, method, path, { key: a.api_key });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.code).to.equal('not_found');
    }
    const [n] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`,
      [idB],
    );
    expect(n.n).to.equal(0);
    expect(await ids(b.api_key)).to.deep.equal([idB]);
    // its own works
    expect((await call(t.url, 'DELETE', `/webhooks/${idA}`, { key: a.api_key })).status).to.equal(204);
    expect(await ids(a.api_key)).to.deep.equal([]);
  });

  it("a document's events go to its company's subscriptions and the organization-wide ones, never to another company's", async () => {
    const a = await orgWithCafs(t, { hasta: 10 });
    const orgName: string = (
      await t.db.dataSource.query('SELECT name FROM organizations WHERE id = $1', [a.orgId])
    )[0].name;
    const b = await t.seed({ org: orgName, rut: newRut(), scopes: [...scopes] });
    expect(b.organization_id).to.equal(a.orgId);
    const subA = await register(a.key, `${PUBLIC_URL}/a`, 'k');
    const subB = await register(b.api_key, `${PUBLIC_URL}/b`, 'k');
    // A key made before company scope existed: its subscription is organization-wide (company_id NULL)
    const keys = localKeyWrapper(randomBytes(32).toString('base64'), 't');
    const { subscription: orgWide } = await createSubscription(
      t.db.dataSource,
      keys,
      { organizationId: a.orgId, env: 'cert' },
      { url: `${PUBLIC_URL}/org`, events: ['dte.status_changed'], idempotencyKey: 'org' },
      { policy: { allowLoopback: false } },
    );
    expect(subA.status, subA.text).to.equal(201);
    expect(subB.status, subB.text).to.equal(201);

    const doc = await emit(t, a, body(33, a.rut, 1));
    expect(doc.status, doc.text).to.be.oneOf([201, 202]);
    const dteId = (doc.body as { id: string }).id;
    const store = new PgWebhookStore(t.db.dataSource, keys);
    const due = await ingestStatus(
      {
        event_id: crypto.randomUUID(),
        dte_id: dteId,
        organization_id: a.orgId,
        sii_env: 'cert',
        tipo_dte: 33,
        folio: 1,
        sii_status: 'sending',
        observed_at: new Date().toISOString(),
        source: 'test',
      },
      store,
      { now: () => Date.now() },
    );
    const rows: { subscription_id: string }[] = await t.db.dataSource.query(
      `SELECT subscription_id FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
      [due.map((d) => d.delivery_id)],
    );
    expect(rows.map((r) => r.subscription_id).sort()).to.deep.equal(
      [(subA.body as { id: string }).id, orgWide.id].sort(),
    );
  });
});
