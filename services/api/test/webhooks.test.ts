import { signingSecret } from '@dte/webhooks';
import { expect } from 'chai';
import { call, newRut, startTestApi, type TestApi } from './support/test-api';

const ALL = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'];
// An IP literal is public without DNS (the test machine has no resolver for public names).
const PUBLIC_URL = 'https://93.184.216.34/dte-hooks';
let keyCounter = 0;
const idem = () => `wh-${Date.now()}-${++keyCounter}`;

describe('/webhooks routes (real PostgreSQL, over HTTP)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let write: string;
  let read: string;
  let both: string;
  let prodBoth: string;
  let otherOrg: string;
  let orgId: string;

  before(async () => {
    t = await startTestApi();
    const rut = newRut();
    const org = `wh-org-${Date.now()}`;
    // signerRuts given on every seed of the shared company (reusing a company with none fails in seed.ts)
    const w = await t.seed({ org, rut, signerRuts: [rut], scopes: ['webhook:write'] });
    orgId = w.organization_id;
    write = w.api_key;
    read = (await t.seed({ org, rut, signerRuts: [rut], scopes: ['webhook:read'] })).api_key;
    both = (await t.seed({ org, rut, signerRuts: [rut], scopes: ['webhook:read', 'webhook:write'] })).api_key;
    prodBoth = (
      await t.seed({ org, rut, signerRuts: [rut], env: 'prod', scopes: ['webhook:read', 'webhook:write'] })
    ).api_key;
    otherOrg = (await t.seed({ scopes: ['webhook:read', 'webhook:write'] })).api_key;
  });
  after(async () => t?.close());

  const create = (key: string, json: unknown, k: string | null = idem()) =>
    call(t.url, 'POST', '/webhooks', { key, json, headers: k === null ? {} : { 'Idempotency-Key': k } });

  it('needs an Idempotency-Key to register', async () => {
    const res = await create(write, { url: PUBLIC_URL, events: ALL }, null);
    expect(res.status).to.equal(400);
    expect(res.body).to.include({
      code: 'idempotency_key_missing',
      next_action: 'send_idempotency_key_header',
    });
  });

  it('registers with 201 and the secret once; a repeated key gives 200 and the same subscription', async () => {
    const k = idem();
    const first = await create(write, { url: PUBLIC_URL, events: ['dte.accepted', 'dte.rejected'] }, k);
    expect(first.status).to.equal(201);
    expect(Object.keys(first.body).sort()).to.deep.equal([
      'active',
      'disabled_at',
      'disabled_reason',
      'events',
      'id',
      'secret',
      'url',
    ]);
    expect(first.body).to.deep.include({
      url: PUBLIC_URL,
      events: ['dte.accepted', 'dte.rejected'],
      active: true,
      disabled_at: null,
      disabled_reason: null,
    });
    expect(first.body.secret).to.be.a('string').with.length.above(31);
    const again = await create(write, { url: PUBLIC_URL, events: ['dte.accepted', 'dte.rejected'] }, k);
    expect(again.status).to.equal(200);
    expect(again.body.id).to.equal(first.body.id);
    expect(again.body).to.not.have.property('secret');
    const conflict = await create(write, { url: `${PUBLIC_URL}/other`, events: ['dte.accepted'] }, k);
    expect(conflict.status).to.equal(409);
    expect(conflict.body.code).to.equal('idempotency_conflict');
    // the same URL with a new key is another subscription with another secret
    const twin = await create(write, { url: PUBLIC_URL, events: ['dte.accepted', 'dte.rejected'] });
    expect(twin.status).to.equal(201);
    expect(twin.body.id).to.not.equal(first.body.id);
    expect(twin.body.secret).to.not.equal(first.body.secret);
  });

  it('refuses URLs that are not public https on the default port with 422 invalid_webhook_url', async () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://10.0.0.1/x',
      'https://192.168.0.10/x',
      'https://100.64.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/',
      'https://[::1]/',
      'https://93.184.216.34:8443/x',
      'https://no-such-host.invalid/x',
    ]) {
      const res = await create(write, { url, events: ALL });
      expect(res.status, url).to.equal(422);
      expect(res.body.code, url).to.equal('invalid_webhook_url');
      expect(res.body).to.not.have.property('next_action');
    }
    for (const url of ['http://93.184.216.34/x', 'ftp://93.184.216.34/x', 'not a url']) {
      const res = await create(write, { url, events: ALL });
      expect(res.status, url).to.equal(422);
      expect(res.body.code, url).to.equal('invalid_webhook_url');
    }
    const bad = await create(write, { url: PUBLIC_URL, events: ['dte.nope'] });
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('validation_failed');
    const env = await create(write, { url: PUBLIC_URL, events: ALL, sii_env: 'prod' });
    expect(env.status).to.equal(400);
  });

  it('is Bearer only, with webhook:write and webhook:read kept apart', async () => {
    const none = await call(t.url, 'GET', '/webhooks');
    expect(none.status).to.equal(401);
    expect(none.body.code).to.equal('unauthorized');
    const list = await call(t.url, 'GET', '/webhooks', { key: write });
    expect(list.status).to.equal(403);
    expect(list.body).to.include({ code: 'forbidden', next_action: 'use_api_key_with_required_scope' });
    const reg = await create(read, { url: PUBLIC_URL, events: ALL });
    expect(reg.status).to.equal(403);
    expect((await call(t.url, 'GET', '/webhooks', { key: read })).status).to.equal(200);
  });

  it("lists only the key's environment and organization, never with secrets", async () => {
    const mine = await create(both, { url: `${PUBLIC_URL}/list`, events: ALL });
    const prod = await create(prodBoth, { url: `${PUBLIC_URL}/prod`, events: ALL });
    expect(prod.status).to.equal(201);
    const cert = await call<{ webhooks: Record<string, unknown>[] }>(t.url, 'GET', '/webhooks', {
      key: both,
    });
    expect(cert.status).to.equal(200);
    const ids = cert.body.webhooks.map((w) => w.id);
    expect(ids).to.include(mine.body.id);
    expect(ids).to.not.include(prod.body.id);
    for (const w of cert.body.webhooks) expect(w).to.not.have.property('secret');
    const prodList = await call<{ webhooks: { id: string }[] }>(t.url, 'GET', '/webhooks', { key: prodBoth });
    expect(prodList.body.webhooks.map((w) => w.id)).to.deep.equal([prod.body.id]);
    const other = await call<{ webhooks: unknown[] }>(t.url, 'GET', '/webhooks', { key: otherOrg });
    expect(other.body.webhooks).to.deep.equal([]);
    // the other environment's key cannot touch it either
    expect(
      (await call(t.url, 'POST', `/webhooks/${mine.body.id}/rotate-secret`, { key: prodBoth })).status,
    ).to.equal(404);
  });

  it('rotates the secret (new one shown once) and answers 404 not_found for other organizations', async () => {
    const s = await create(write, { url: `${PUBLIC_URL}/rot`, events: ALL });
    const rot = await call(t.url, 'POST', `/webhooks/${s.body.id}/rotate-secret`, { key: write });
    expect(rot.status).to.equal(200);
    expect(rot.body.id).to.equal(s.body.id);
    expect(rot.body.secret).to.be.a('string').and.not.equal(s.body.secret);
    // stored sealed under the api's master key, never in clear; it opens to the new secret
    const [row] = await t.db.dataSource.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [
      s.body.id,
    ]);
    expect(row.secret).to.equal(null);
    expect(JSON.stringify(row)).to.not.include(rot.body.secret as string);
    expect(await signingSecret(t.deps.keys, row)).to.equal(rot.body.secret);
    for (const [method, path] of [
      ['POST', `/webhooks/${s.body.id}/rotate-secret`],
      ['POST', `/webhooks/${s.body.id}/test`],
      ['DELETE', `/webhooks/${s.body.id}`],
      ['POST', '/webhooks/not-a-uuid/test'],
    ]) {
      const res = await call(t.url, method!, path!, { key: otherOrg });
      expect(res.status, path).to.equal(404);
      expect(res.body.code).to.equal('not_found');
    }
  });

  it('enqueues a test delivery (202), refuses it on an inactive endpoint (409, nothing enqueued)', async () => {
    const s = await create(write, { url: `${PUBLIC_URL}/test`, events: ['dte.emitted'] });
    const res = await call(t.url, 'POST', `/webhooks/${s.body.id}/test`, { key: write });
    expect(res.status).to.equal(202);
    expect(Object.keys(res.body).sort()).to.deep.equal(['delivery_id', 'event_id', 'status']);
    expect(res.body.status).to.equal('pending');
    expect(res.body.event_id).to.match(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const [d] = await t.db.dataSource.query(`SELECT * FROM webhook_deliveries WHERE id = $1`, [
      res.body.delivery_id,
    ]);
    expect(d).to.include({ state: 'pending', event_id: res.body.event_id, event_type: 'dte.status_changed' });
    const env = JSON.parse(d.payload);
    expect(env.data).to.deep.include({
      sii_status: 'TEST',
      dte_id: '00000000-0000-0000-0000-000000000000',
      folio: 0,
      terminal: false,
      accion: 'contactar_soporte',
      sii_env: 'cert',
    });
    // deactivated as the delivery service does after three exhausted deliveries
    await t.db.dataSource.query(
      `UPDATE webhook_subscriptions SET active = false, disabled_at = now(), disabled_reason = 'consecutive_exhausted_deliveries' WHERE id = $1`,
      [s.body.id],
    );
    const off = await call(t.url, 'POST', `/webhooks/${s.body.id}/test`, { key: write });
    expect(off.status).to.equal(409);
    expect(off.body.code).to.equal('webhook_endpoint_disabled');
    expect((off.body.detail as Record<string, unknown>).disabled_reason).to.equal(
      'consecutive_exhausted_deliveries',
    );
    const [n] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`,
      [s.body.id],
    );
    expect(n.n).to.equal(1);
    const listed = await call<{ webhooks: Record<string, unknown>[] }>(t.url, 'GET', '/webhooks', {
      key: both,
    });
    const rec = listed.body.webhooks.find((w) => w.id === s.body.id)!;
    expect(rec.active).to.equal(false);
    expect(rec.disabled_at).to.be.a('string');
    expect(rec.disabled_reason).to.equal('consecutive_exhausted_deliveries');
  });

  it('deletes with 204 and no body, removing the delivery records', async () => {
    const s = await create(write, { url: `${PUBLIC_URL}/del`, events: ALL });
    await call(t.url, 'POST', `/webhooks/${s.body.id}/test`, { key: write });
    const del = await call(t.url, 'DELETE', `/webhooks/${s.body.id}`, { key: write });
    expect(del.status).to.equal(204);
    expect(del.text).to.equal('');
    const [n] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`,
      [s.body.id],
    );
    expect(n.n).to.equal(0);
    expect((await call(t.url, 'DELETE', `/webhooks/${s.body.id}`, { key: write })).status).to.equal(404);
    void orgId;
  });

  it('documents the five routes in the OpenAPI document', async () => {
    const doc = await call<{ paths: Record<string, Record<string, unknown>> }>(t.url, 'GET', '/openapi.json');
    expect(doc.body.paths['/webhooks']).to.have.keys('get', 'post');
    expect(doc.body.paths['/webhooks/{id}/rotate-secret']).to.have.key('post');
    expect(doc.body.paths['/webhooks/{id}/test']).to.have.key('post');
    expect(doc.body.paths['/webhooks/{id}']).to.have.key('delete');
  });
});
