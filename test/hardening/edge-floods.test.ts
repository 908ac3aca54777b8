/**
 * Issue 28, the HTTP edge attacked as an outsider would (a real api over HTTP, real PostgreSQL,
 * Redis and the SII simulator): anonymous slow bodies and wrong keys must not stop a tenant's
 * valid key; slow bodies are cut off by the request deadline.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { expect } from 'chai';

import { loadConfig } from '../../services/api/src/config';
import { resolveClient, trustList } from '../../services/api/src/http/client-address';
import { call, startTestApi, type TestApi } from '../../services/api/test/support/test-api';
import { body, emit, orgWithCafs, type DteOrg } from '../../services/api/test/dtes-fixtures';

/** A request whose headers arrive and whose body never ends: resolves when the api closes it. */
function slowBody(t: TestApi, path: string, headers: Record<string, string> = {}) {
  const u = new URL(t.url);
  const socket = net.connect(Number(u.port), u.hostname);
  let answer = '';
  const closed = new Promise<{ answer: string; at: number }>((resolve) => {
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answer, at: Date.now() }));
  });
  const head = [
    `POST ${u.pathname}${path} HTTP/1.1`,
    `Host: ${u.host}`,
    'Content-Type: application/json',
    'Content-Length: 100000',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  socket.write(`${head}{"email": "x`);
  return { socket, closed };
}

/** the api marks keys created outside it as existing every KNOWN_KEYS_REFRESH_MS (300 here) */
const knownAfterRefresh = () => new Promise((r) => setTimeout(r, 800));

const wrongKey = () => `sk_cert_${randomBytes(32).toString('base64url')}`;

describe('edge hardening: slow bodies and wrong keys cannot stop a tenant (issue 28)', function () {
  this.timeout(180_000);

  describe('slow-body flood', () => {
    let t: TestApi;
    let o: DteOrg;
    const REQUEST_TIMEOUT_MS = 3000;
    before(async () => {
      // the default write cap (API_MAX_INFLIGHT 64) and a short request deadline
      t = await startTestApi({ env: { API_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } });
      o = await orgWithCafs(t, { tipos: [33], hasta: 100 });
    });
    after(() => t?.close());

    it("70 anonymous bodies that never end leave the cap to authenticated work: a valid key's POST /dtes is accepted; the slow ones are cut off at the deadline", async () => {
      const started = Date.now();
      const slow = [
        ...Array.from({ length: 60 }, () => slowBody(t, '/auth/login')),
        ...Array.from({ length: 10 }, () => slowBody(t, '/auth/signup')),
        ...Array.from({ length: 10 }, () => slowBody(t, '/dtes', { Authorization: `Bearer ${wrongKey()}` })),
      ];
      try {
        await new Promise((r) => setTimeout(r, 300)); // every one is in the api with its headers
        const ok = await emit(t, o, body(33, o.rut, 5000));
        expect(ok.status, ok.text).to.equal(202);
        expect(ok.body.folio).to.be.a('number');
        // the slow ones are closed by the api once the request deadline passes (not after 300 s)
        const ends = await Promise.all(slow.map((s) => s.closed));
        for (const e of ends) expect(e.at - started).to.be.below(REQUEST_TIMEOUT_MS + 4000);
        expect(ends.filter((e) => e.answer.startsWith('HTTP/1.1 408')).length).to.be.greaterThan(0);
      } finally {
        for (const s of slow) s.socket.destroy();
      }
    });
  });

  describe('wrong-key flood', () => {
    let lookups = 0;
    // key lookups go to the pool as named prepared statements (queryPrepared), counted there
    const countLookups = (t: TestApi) => {
      const pool = (t.db.dataSource.driver as unknown as { master: { query: (...a: unknown[]) => unknown } })
        .master;
      const query = pool.query.bind(pool);
      pool.query = (...args: unknown[]) => {
        const q = args[0] as string | { text?: string };
        if ((typeof q === 'string' ? q : (q?.text ?? '')).includes('FROM api_keys k WHERE k.key_hash'))
          lookups += 1;
        return query(...args);
      };
    };

    describe('direct clients (no proxy configured)', () => {
      let t: TestApi;
      before(async () => {
        t = await startTestApi({ env: { AUTH_FAILURE_MAX: '20', KNOWN_KEYS_REFRESH_MS: '300' } });
        countLookups(t);
      });
      after(() => t?.close());

      it('25 wrong keys from one address, then that address is refused new unknown keys before any lookup; the valid key from the same address is served', async () => {
        // a key made by the seed (another process, as the operator CLI) never used yet
        const s = await t.seed();
        await knownAfterRefresh();
        const answers: number[] = [];
        for (let i = 0; i < 25; i++)
          answers.push((await call(t.url, 'GET', '/caf', { key: wrongKey() })).status);
        expect(answers.slice(0, 20)).to.deep.equal(Array(20).fill(401));
        expect(answers.slice(20)).to.deep.equal(Array(5).fill(429));
        expect(lookups, 'the counter sees the lookups of the failing keys').to.be.greaterThan(0);
        const before = lookups;
        const refused = await call(t.url, 'GET', '/caf', { key: wrongKey() });
        expect(refused.status).to.equal(429);
        expect(refused.body.code).to.equal('rate_limit');
        expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
        expect(lookups, 'no lookup for a refused key').to.equal(before);

        const valid = await call(t.url, 'GET', '/caf', { key: s.api_key });
        expect(valid.status, valid.text).to.equal(200);
        // a request without credentials is a plain 401, never a 429 (it costs no lookup)
        expect((await call(t.url, 'GET', '/caf')).status).to.equal(401);
        // a forged X-Forwarded-For from a peer that is not a trusted proxy changes nothing
        const spoofed = await call(t.url, 'GET', '/caf', {
          key: wrongKey(),
          headers: { 'X-Forwarded-For': '198.51.100.77' },
        });
        expect(spoofed.status).to.equal(429);
      });
    });

    describe('behind a configured proxy (TRUSTED_PROXIES)', () => {
      let t: TestApi;
      before(async () => {
        t = await startTestApi({
          env: { AUTH_FAILURE_MAX: '20', TRUSTED_PROXIES: '127.0.0.1', KNOWN_KEYS_REFRESH_MS: '300' },
        });
        countLookups(t);
      });
      after(() => t?.close());

      const via = (client: string, key: string) =>
        call(t.url, 'GET', '/caf', { key, headers: { 'X-Forwarded-For': `${client}, 127.0.0.1` } });

      it("one client's stale keys lock out only that client's unknown keys: its valid key and every other client still pass", async () => {
        const s = await t.seed();
        const other = await t.seed();
        await knownAfterRefresh();
        const attacker = '203.0.113.7';
        for (let i = 0; i < 24; i++) await via(attacker, wrongKey());
        expect((await via(attacker, wrongKey())).status).to.equal(429);
        // entries the client writes itself, left of what the proxy appended, change nothing
        const forged = await call(t.url, 'GET', '/caf', {
          key: wrongKey(),
          headers: { 'X-Forwarded-For': `198.51.100.50, ${attacker}, 127.0.0.1` },
        });
        expect(forged.status).to.equal(429);
        // the same client, its valid key: served
        expect((await via(attacker, s.api_key)).status).to.equal(200);
        // another customer behind the same proxy: its keys, and even its own wrong key, are not refused
        expect((await via('198.51.100.9', other.api_key)).status).to.equal(200);
        expect((await via('198.51.100.9', wrongKey())).status).to.equal(401);
      });

      it('reads CIDR blocks and IPv4-mapped peers, skips only trusted hops, and refuses a bad TRUSTED_PROXIES at start', () => {
        const trust = trustList(['10.0.0.0/8', '2001:db8::/32'])!;
        expect(resolveClient('::ffff:10.1.2.3', '203.0.113.9', trust)).to.equal('203.0.113.9');
        expect(resolveClient('10.1.2.3', '198.51.100.1, 203.0.113.9, 10.9.9.9', trust)).to.equal(
          '203.0.113.9',
        );
        expect(resolveClient('2001:db8::1', '2001:db8::2, 2001:db8::3', trust)).to.equal('2001:db8::2');
        expect(resolveClient('10.1.2.3', 'not-an-address', trust)).to.equal('10.1.2.3');
        expect(resolveClient('192.0.2.5', '203.0.113.9', trust), 'an untrusted peer').to.equal('192.0.2.5');
        const master = { MASTER_KEY: randomBytes(32).toString('base64') };
        expect(loadConfig({ ...master, TRUSTED_PROXIES: '10.0.0.0/8, ::1' }).trustedProxies).to.deep.equal([
          '10.0.0.0/8',
          '::1',
        ]);
        expect(() => loadConfig({ ...master, TRUSTED_PROXIES: '10.0.0.0/33' })).to.throw(/TRUSTED_PROXIES/);
        expect(() => loadConfig({ ...master, TRUSTED_PROXIES: 'ingress.local' })).to.throw(/TRUSTED_PROXIES/);
      });

      it('one stale key presented from many addresses is refused by its prefix, not the valid keys', async () => {
        const s = await t.seed();
        await knownAfterRefresh();
        const stale = wrongKey();
        const answers: number[] = [];
        for (let i = 0; i < 24; i++) answers.push((await via(`192.0.2.${i + 1}`, stale)).status);
        expect(answers.slice(0, 20)).to.deep.equal(Array(20).fill(401));
        expect(answers.slice(20)).to.deep.equal(Array(4).fill(429));
        expect((await via('192.0.2.200', s.api_key)).status).to.equal(200);
      });
    });
  });
});
