import { expect } from 'chai';
import { generateApiKey } from '../src/auth/api-key-format';
import {
  call,
  companyRut,
  DASHBOARD_ORIGIN,
  startTestApi,
  uploadCert,
  withoutRequestId,
  type TestApi,
} from './support/test-api';

describe('api authentication, scopes, sessions, CSRF and rate limit', function () {
  this.timeout(120_000);
  let t: TestApi;

  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it('answers 401 unauthorized without a Bearer header', async () => {
    for (const headers of [{}, { Authorization: 'Basic abc' }] as Record<string, string>[]) {
      const res = await call(t.url, 'GET', '/certificates', { headers });
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ code: 'unauthorized', next_action: 'send_bearer_token' });
    }
  });

  it('answers 401 invalid_api_key for a malformed or unknown key', async () => {
    for (const key of ['nonsense', generateApiKey('cert').key, generateApiKey('prod').key]) {
      const res = await call(t.url, 'GET', '/certificates', { key });
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ code: 'invalid_api_key', next_action: 'regenerate_api_key' });
    }
  });

  it('answers 401 api_key_expired and api_key_revoked', async () => {
    const expired = await t.seed({ expiresAt: new Date(Date.now() - 1000) });
    let res = await call(t.url, 'GET', '/certificates', { key: expired.api_key });
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ code: 'api_key_expired', next_action: 'regenerate_api_key' });

    const live = await t.seed();
    expect((await call(t.url, 'GET', '/certificates', { key: live.api_key })).status).to.equal(200);
    await t.db.dataSource.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [live.api_key_id]);
    res = await call(t.url, 'GET', '/certificates', { key: live.api_key });
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ code: 'api_key_revoked', next_action: 'regenerate_api_key' });
  });

  it('stores only a SHA-256 of the key, and the key names its environment', async () => {
    const s = await t.seed({ env: 'prod' });
    expect(s.api_key).to.match(/^sk_prod_[A-Za-z0-9_-]{43}$/);
    const rows = await t.db.dataSource.query('SELECT prefix, key_hash FROM api_keys WHERE id = $1', [
      s.api_key_id,
    ]);
    const { createHash } = await import('node:crypto');
    expect(rows[0].key_hash).to.equal(createHash('sha256').update(s.api_key).digest('hex'));
    expect(rows[0].prefix).to.equal(s.api_key.slice(0, 16));
    const dump = JSON.stringify(await t.db.dataSource.query('SELECT * FROM api_keys'));
    expect(dump).to.not.contain(s.api_key);
  });

  it('answers 403 forbidden with use_api_key_with_required_scope for a missing scope', async () => {
    const s = await t.seed({ scopes: ['dte:read', 'webhook:write'] });
    const res = await call(t.url, 'GET', '/certificates', { key: s.api_key });
    expect(res.status).to.equal(403);
    expect(res.body).to.include({ code: 'forbidden', next_action: 'use_api_key_with_required_scope' });
    expect(res.body.detail).to.deep.equal({ requiredScope: 'certificates:read' });
    // dte:read is enough for the CAF inventory
    expect((await call(t.url, 'GET', '/caf', { key: s.api_key })).status).to.equal(200);
  });

  it("answers another organization's certificate exactly like a missing one (404)", async () => {
    const a = await t.seed();
    const b = await t.seed();
    const cert = await uploadCert(t, a.api_key, await companyRut(t, a.company_id));
    const foreign = await call(t.url, 'POST', `/certificates/${cert.id}/activate`, { key: b.api_key });
    const missing = await call(t.url, 'POST', `/certificates/00000000-0000-4000-8000-000000000000/activate`, {
      key: b.api_key,
    });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.code).to.equal('cert.not_found');
    const strip = (body: Record<string, unknown>) => {
      const rest = withoutRequestId(body);
      delete (rest.detail as Record<string, unknown> | undefined)?.certificateId;
      return rest;
    };
    expect(strip(foreign.body)).to.deep.equal(strip(missing.body));
  });

  describe('dashboard session cookie', () => {
    let org: string;
    let owner: string;
    let member: string;

    before(async () => {
      const s = await t.seed({ ownerEmail: `owner-${Date.now()}@x.cl` });
      org = s.organization_id;
      owner = s.user_id!;
      const m = await t.seed({
        org: 'ignored',
        ownerEmail: `member-${Date.now()}@x.cl`,
        ownerRole: 'member',
      });
      member = m.user_id!;
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'member')`,
        [member, org],
      );
    });

    it('reads with a session of the organization', async () => {
      const res = await call(t.url, 'GET', '/certificates', { cookie: await t.sessionCookie(owner, org) });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ data: [], next_cursor: null });
    });

    it('answers 412 org.required when the session has no organization', async () => {
      const res = await call(t.url, 'GET', '/caf', { cookie: await t.sessionCookie(owner, null) });
      expect(res.status).to.equal(412);
      expect(res.body.code).to.equal('org.required');
      expect(res.body).to.not.have.property('next_action');
    });

    it('answers 412 org.rut_missing for an organization without a company RUT', async () => {
      const [o] = await t.db.dataSource.query(
        `INSERT INTO organizations (name) VALUES ('sin rut') RETURNING id`,
      );
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`,
        [owner, o.id],
      );
      const res = await call(t.url, 'PUT', '/caf/auto', {
        cookie: await t.sessionCookie(owner, o.id),
        json: { tipo_dte: 33, enabled: true },
        headers: { Origin: DASHBOARD_ORIGIN },
      });
      // a session acts in cert by default: ask in prod to reach the company rule
      expect(res.body.code).to.equal('caf.auto_requires_production');
      const prod = await fetch(`${t.url}/caf/auto?sii_env=prod`, {
        method: 'PUT',
        headers: {
          Cookie: `dte_session=${await t.sessionCookie(owner, o.id)}`,
          Origin: DASHBOARD_ORIGIN,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ tipo_dte: 33, enabled: true }),
      });
      expect(prod.status).to.equal(412);
      expect(((await prod.json()) as { code: string }).code).to.equal('org.rut_missing');
    });

    it('refuses forged or expired cookies with 401 unauthorized', async () => {
      const good = await t.sessionCookie(owner, org);
      const forged = good.slice(0, -2) + (good.endsWith('AA') ? 'BB' : 'AA');
      for (const cookie of [forged, await t.sessionCookie(owner, org, -10)]) {
        const res = await call(t.url, 'GET', '/certificates', { cookie });
        expect(res.status).to.equal(401);
        expect(res.body.code).to.equal('unauthorized');
      }
    });

    it('needs role owner or admin to upload, with 403 forbidden (role cause, no next_action)', async () => {
      const res = await call(t.url, 'POST', '/caf/request', {
        cookie: await t.sessionCookie(member, org),
        json: { tipo_dte: 33, cantidad: 10 },
        headers: { Origin: DASHBOARD_ORIGIN },
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('forbidden');
      expect(res.body).to.not.have.property('next_action');
      expect(res.body.detail).to.include({ role: 'member' });
    });

    it('blocks cross-origin session mutations: csrf_origin_mismatch and csrf_blocked', async () => {
      const cookie = await t.sessionCookie(owner, org);
      const json = { tipo_dte: 33, cantidad: 10 };
      let res = await call(t.url, 'POST', '/caf/request', {
        cookie,
        json,
        headers: { Origin: 'https://evil.test' },
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('csrf_origin_mismatch');
      res = await call(t.url, 'POST', '/caf/request', {
        cookie,
        json,
        headers: { Referer: 'https://evil.test/page' },
      });
      expect(res.body.code).to.equal('csrf_origin_mismatch');
      res = await call(t.url, 'POST', '/caf/request', { cookie, json });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('csrf_blocked');
      res = await call(t.url, 'POST', '/caf/request', {
        cookie,
        json,
        headers: { Origin: DASHBOARD_ORIGIN, 'Sec-Fetch-Site': 'cross-site' },
      });
      expect(res.body.code).to.equal('csrf_blocked');
      // from the dashboard origin the request passes the CSRF gate (and meets the next rule)
      res = await call(t.url, 'POST', '/caf/request', {
        cookie,
        json,
        headers: { Origin: DASHBOARD_ORIGIN },
      });
      expect(res.status).to.equal(412);
      expect(res.body.code).to.equal('cert.missing');
    });

    it('does not apply CSRF checks to Bearer keys', async () => {
      const s = await t.seed();
      const res = await call(t.url, 'POST', '/caf/request', {
        key: s.api_key,
        json: { tipo_dte: 33, cantidad: 10 },
        headers: { Origin: 'https://evil.test', 'Sec-Fetch-Site': 'cross-site' },
      });
      expect(res.body.code).to.equal('cert.missing');
    });
  });

  describe('rate limit', () => {
    let limited: TestApi;
    before(async () => {
      limited = await startTestApi({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SEC: '3600' } });
    });
    after(async () => limited?.close());

    it('answers 429 rate_limit with detail.retryAfterSec and Retry-After, per key', async () => {
      const a = await limited.seed();
      const b = await limited.seed();
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await call(limited.url, 'GET', '/caf', { key: a.api_key }));
      expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 429]);
      const last = answers[3];
      expect(last.body.code).to.equal('rate_limit');
      const retry = (last.body.detail as { retryAfterSec: number }).retryAfterSec;
      expect(retry).to.be.within(1, 3600);
      expect(last.headers.get('retry-after')).to.equal(String(retry));
      expect(answers[0].headers.get('ratelimit-remaining')).to.equal('2');
      // another key has its own window
      expect((await call(limited.url, 'GET', '/caf', { key: b.api_key })).status).to.equal(200);
    });
  });
});
