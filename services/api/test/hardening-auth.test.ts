import { expect } from 'chai';
import { Redis } from 'ioredis';

import { createApiKey } from '../src/api-keys';
import { call, startTestApi, type TestApi } from './support/test-api';

describe('api hardening: failed authentication, Redis outage, sliding window, key scopes (over HTTP)', function () {
  this.timeout(120_000);

  describe('failed authentications per client address', () => {
    let t: TestApi;
    let lookups = 0;
    before(async () => {
      t = await startTestApi({ env: { AUTH_FAILURE_MAX: '5' } });
      // count the api_keys lookups the api makes (named prepared statements on the pool), to show
      // the refused ones never reach the database
      const pool = (t.db.dataSource.driver as unknown as { master: { query: (...a: unknown[]) => unknown } })
        .master;
      const query = pool.query.bind(pool);
      pool.query = (...args: unknown[]) => {
        const q = args[0] as string | { text?: string };
        if ((typeof q === 'string' ? q : (q?.text ?? '')).includes('FROM api_keys k WHERE k.key_hash'))
          lookups += 1;
        return query(...args);
      };
    });
    after(async () => t?.close());

    it('after 5 failures an address gets 429 rate_limit for unknown keys before any lookup; a valid key is still served', async () => {
      const s = await t.seed();
      expect((await call(t.url, 'GET', '/caf', { key: s.api_key })).status).to.equal(200); // now known
      const bogus = `sk_cert_${'x'.repeat(43)}`; // well-formed: looked up, not found
      const answers: number[] = [];
      for (let i = 0; i < 5; i++) answers.push((await call(t.url, 'GET', '/caf', { key: bogus })).status);
      expect(answers).to.deep.equal([401, 401, 401, 401, 401]);
      expect(lookups, 'the counter sees the lookups of the failing keys').to.be.greaterThan(0);
      const before = lookups;
      const refused = await call(t.url, 'GET', '/caf', { key: bogus });
      expect(refused.status).to.equal(429);
      expect(refused.body.code).to.equal('rate_limit');
      expect((refused.body.detail as { retryAfterSec: number }).retryAfterSec).to.be.within(1, 60);
      expect(lookups, 'api_keys lookups after the limit').to.equal(before);
      const valid = await call(t.url, 'GET', '/caf', { key: s.api_key });
      expect(valid.status, valid.text).to.equal(200);
    });
  });

  describe('Redis outage', () => {
    let t: TestApi;
    let dead: Redis;
    before(async () => {
      dead = new Redis('redis://127.0.0.1:1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
      });
      dead.on('error', () => undefined);
      t = await startTestApi({ deps: { redis: dead } });
    });
    after(async () => {
      await t?.close();
      dead.disconnect();
    });

    it("answers the catalog's 503 db.unavailable naming redis, not 500", async () => {
      const s = await t.seed();
      const res = await call(t.url, 'GET', '/caf', { key: s.api_key });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('db.unavailable');
      expect(res.body.detail).to.deep.equal({ dependency: 'redis' });
    });
  });

  describe('sliding window', () => {
    let t: TestApi;
    before(async () => {
      t = await startTestApi({ env: { RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_SEC: '60' } });
    });
    after(async () => t?.close());

    it('a burst at the end of one window and the start of the next passes the limit only once', async () => {
      const s = await t.seed();
      // place the clock 1 s before a window edge
      const nowMs = Date.now();
      t.advanceClock(60_000 - (nowMs % 60_000) - 1000);
      const burst1: number[] = [];
      for (let i = 0; i < 4; i++) burst1.push((await call(t.url, 'GET', '/caf', { key: s.api_key })).status);
      expect(burst1).to.deep.equal([200, 200, 200, 200]);
      t.advanceClock(2000); // 1 s into the next window: the previous one still weighs ~98 %
      const burst2 = (await call(t.url, 'GET', '/caf', { key: s.api_key })).status;
      expect(burst2, 'a fixed window would have reset here').to.equal(429);
    });
  });

  it('a key created without scopes can only read documents (least privilege)', async () => {
    const t = await startTestApi();
    try {
      const s = await t.seed();
      const k = await createApiKey(t.db.dataSource, {
        companyId: s.company_id,
        environment: 'cert',
        name: 'plain',
      });
      const rows = await t.db.dataSource.query('SELECT scopes FROM api_keys WHERE id = $1', [k.id]);
      expect(rows[0].scopes).to.deep.equal(['dte:read']);
      expect((await call(t.url, 'GET', '/certificates', { key: k.key })).body.code).to.equal('forbidden');
      expect((await call(t.url, 'GET', '/caf', { key: k.key })).status).to.equal(200);
    } finally {
      await t.close();
    }
  });
});
