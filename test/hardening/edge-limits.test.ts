/**
 * Issue 28 and issue 27 item 4 at the HTTP edge (a real api over HTTP, real PostgreSQL, Redis and
 * the SII simulator): sign-up and login bursts, the bound on concurrent password hashes, the
 * write cap's per-organization share, the per-organization request limit and its headers, the
 * security headers, /mcp's token before its body, and the production start refusal.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { passwordHashPeak } from '@dte/accounts';
import { expect } from 'chai';

import { loadConfig } from '../../services/api/src/config';
import { defaultTenantShare } from '../../services/api/src/http/inflight-limit';
import {
  call,
  DASHBOARD_ORIGIN,
  startTestApi,
  type Answer,
  type TestApi,
} from '../../services/api/test/support/test-api';
import { body, emit, holdCompanyFolios, orgWithCafs } from '../../services/api/test/dtes-fixtures';

const ROOT = path.resolve(__dirname, '../..');
const execFileP = promisify(execFile);

/** Sign-up or login from `address` (the api trusts 127.0.0.1 as its proxy in these tests). */
const account = (t: TestApi, what: 'signup' | 'login', address: string, email?: string) =>
  call(t.url, 'POST', `/auth/${what}`, {
    json: {
      email: email ?? `u-${randomBytes(5).toString('hex')}@example.cl`,
      password: 'una clave bien larga',
    },
    headers: { Origin: DASHBOARD_ORIGIN, 'X-Forwarded-For': address },
  });

/**
 * The account bounds count per calendar minute (login-guard's windows): a burst that starts in
 * the minute's last seconds would be split over two windows, so it starts in a fresh minute.
 */
async function withinOneMinuteWindow(needMs = 20_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50));
}

const expectRateLimited = (r: Answer) => {
  expect(r.status, r.text).to.equal(429);
  expect(r.body.code).to.equal('rate_limit');
  const after = (r.body.detail as { retryAfterSec: number }).retryAfterSec;
  expect(after).to.be.a('number').and.to.be.greaterThan(0);
  expect(r.headers.get('retry-after')).to.equal(String(after));
};

describe('edge hardening: account bursts, hash bound, fair write cap, limits and headers (issues 27, 28)', function () {
  this.timeout(240_000);

  describe('sign-up and login bursts', () => {
    let t: TestApi;
    before(async () => {
      t = await startTestApi({
        env: {
          TRUSTED_PROXIES: '127.0.0.1',
          SIGNUP_PER_ADDRESS_PER_HOUR: '2',
          SIGNUP_GLOBAL_PER_MINUTE: '4',
          LOGIN_PER_ADDRESS_PER_MINUTE: '3',
          LOGIN_GLOBAL_PER_MINUTE: '5',
        },
      });
    });
    after(() => t?.close());

    it('a sign-up burst from one address is refused with rate_limit and Retry-After; then every address is refused once the global bound is passed', async () => {
      await withinOneMinuteWindow();
      expect((await account(t, 'signup', '203.0.113.10')).status).to.equal(201);
      expect((await account(t, 'signup', '203.0.113.10')).status).to.equal(201);
      expectRateLimited(await account(t, 'signup', '203.0.113.10'));
      // another address still signs up, until the minute's global bound (4 attempts) is passed
      expect((await account(t, 'signup', '198.51.100.20')).status).to.equal(201);
      expectRateLimited(await account(t, 'signup', '198.51.100.21'));
      const users: { n: string }[] = await t.db.dataSource.query('SELECT count(*) AS n FROM users');
      expect(Number(users[0].n)).to.equal(3);
    });

    it('a login burst from one address is refused with rate_limit and Retry-After, and the global bound refuses the rest', async () => {
      await withinOneMinuteWindow();
      const answers: Answer[] = [];
      for (let i = 0; i < 4; i++) answers.push(await account(t, 'login', '203.0.113.30', 'nadie@example.cl'));
      expect(answers.slice(0, 3).map((r) => r.status)).to.deep.equal([401, 401, 401]);
      expectRateLimited(answers[3]!);
      expect((await account(t, 'login', '198.51.100.40', 'otro@example.cl')).status).to.equal(401);
      expectRateLimited(await account(t, 'login', '198.51.100.41', 'otro@example.cl'));
    });
  });

  describe('concurrent password hashes', () => {
    let t: TestApi;
    before(async () => {
      t = await startTestApi({
        env: {
          TRUSTED_PROXIES: '127.0.0.1',
          PASSWORD_HASH_CONCURRENCY: '2',
          PASSWORD_HASH_QUEUE: '2',
          SIGNUP_PER_ADDRESS_PER_HOUR: '100',
        },
      });
    });
    after(() => t?.close());

    it('10 sign-ups at once: at most 2 scrypt hashes (128 MiB each) run together, 2 wait, the rest are refused with rate_limit and Retry-After', async () => {
      passwordHashPeak(); // reset the high-water mark
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => account(t, 'signup', `192.0.2.${i + 1}`)),
      );
      const created = answers.filter((r) => r.status === 201);
      const refused = answers.filter((r) => r.status !== 201);
      for (const r of refused) expectRateLimited(r);
      expect(created.length).to.equal(4);
      expect(passwordHashPeak()).to.equal(2);
      const users: { n: string }[] = await t.db.dataSource.query('SELECT count(*) AS n FROM users');
      expect(Number(users[0].n)).to.equal(4);
    });
  });

  describe('per-organization share of the write cap', () => {
    let t: TestApi;
    before(async () => {
      t = await startTestApi({ env: { API_MAX_INFLIGHT: '3', API_MAX_INFLIGHT_PER_ORG: '2' } });
    });
    after(() => t?.close());

    it("one organization's writes held in flight take only its share: its next write is refused, another organization's is accepted", async () => {
      const a = await orgWithCafs(t, { tipos: [33], hasta: 50 });
      const b = await orgWithCafs(t, { tipos: [33], hasta: 50 });
      const hold = await holdCompanyFolios(t, a);
      let held: Promise<Answer>[] = [];
      try {
        held = [emit(t, a, body(33, a.rut, 1000)), emit(t, a, body(33, a.rut, 1001))];
        await new Promise((r) => setTimeout(r, 500)); // both in the api, waiting for their folio
        // refused at once; admitted, it would wait at the held folio (then: failed after 5 s)
        const thirdPending = emit(t, a, body(33, a.rut, 1002));
        held.push(thirdPending);
        const third = await Promise.race([
          thirdPending,
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('admitted beyond its share: held at the folio')), 5000),
          ),
        ]);
        held.pop();
        expectRateLimited(third);
        expect(third.body.message).to.contain('your organization');
        const other = await emit(t, b, body(33, b.rut, 2000));
        expect(other.status, other.text).to.equal(202);
      } finally {
        await hold.release();
      }
      for (const r of await Promise.all(held)) expect(r.status, r.text).to.equal(202);
    });
  });

  describe('request limits (issue 27) and headers', () => {
    let t: TestApi;
    before(async () => {
      t = await startTestApi({ env: { PUBLIC_BASE_URL: 'https://api.example.cl/api/v1' } });
    });
    after(() => t?.close());

    it('the default per-key limit is 20 000 a minute (~330 a second: one key drives 300 documents a second)', () => {
      const config = loadConfig({ MASTER_KEY: randomBytes(32).toString('base64') });
      expect(config.rateLimitMax).to.equal(20_000);
      expect(config.rateLimitWindowSec).to.equal(60);
      // and one organization's share of the write cap (300 writes a second at up to 320 ms) leaves
      // a quarter to the others
      expect(config.apiMaxInflight).to.equal(128);
      expect(config.apiMaxInflightPerOrg).to.equal(undefined);
      expect(defaultTenantShare(config.apiMaxInflight)).to.equal(96);
    });

    it("an organization's own limit applies to its keys only, shown in RateLimit-* headers, and answers 429 with Retry-After beyond it", async () => {
      const small = await t.seed();
      const other = await t.seed();
      const setLimit = (...args: string[]) =>
        execFileP(
          process.execPath,
          [
            '--import',
            'tsx',
            'src/cli/set-rate-limit.ts',
            '--org',
            small.organization_id,
            '--operator',
            'Ana',
            ...args,
          ],
          {
            cwd: path.join(ROOT, 'packages/accounts'),
            env: { ...process.env, DATABASE_URL: t.config.databaseUrl, DATABASE_SCHEMA: t.db.schema },
          },
        );
      // the operator's command sets the organization's own limit
      const { stdout } = await setLimit('--max', '3');
      expect(JSON.parse(stdout)).to.deep.equal({ organization_id: small.organization_id, rate_limit_max: 3 });
      const answers: Answer[] = [];
      for (let i = 0; i < 4; i++) answers.push(await call(t.url, 'GET', '/caf', { key: small.api_key }));
      expect(answers.slice(0, 3).map((r) => r.status)).to.deep.equal([200, 200, 200]);
      expect(answers[0]!.headers.get('ratelimit-limit')).to.equal('3');
      expect(answers[2]!.headers.get('ratelimit-remaining')).to.equal('0');
      expect(Number(answers[0]!.headers.get('ratelimit-reset'))).to.be.within(1, 60);
      expectRateLimited(answers[3]!);
      const fine = await call(t.url, 'GET', '/caf', { key: other.api_key });
      expect(fine.status).to.equal(200);
      expect(fine.headers.get('ratelimit-limit')).to.equal('10000'); // the harness's RATE_LIMIT_MAX
      // back to the default, audited both times
      await setLimit('--default');
      const back = await call(t.url, 'GET', '/caf', { key: small.api_key });
      expect(back.headers.get('ratelimit-limit')).to.equal('10000');
      const audit: { detail: { rate_limit_max: number | null; before: number | null } }[] =
        await t.db.dataSource.query(
          `SELECT detail FROM audit_log WHERE organization_id = $1 AND action = 'organization.rate_limit_set' ORDER BY id`,
          [small.organization_id],
        );
      expect(audit.map((a) => a.detail)).to.deep.equal([
        { rate_limit_max: 3, before: null },
        { rate_limit_max: null, before: 3 },
      ]);
    });

    it('answers carry X-Content-Type-Options: nosniff and, on https, HSTS (errors included)', async () => {
      const s = await t.seed();
      for (const r of [
        await call(t.url, 'GET', '/caf', { key: s.api_key }),
        await call(t.url, 'GET', '/caf'),
        await call(t.url, 'GET', '/no-such-route', { key: s.api_key }),
      ]) {
        expect(r.headers.get('x-content-type-options'), r.text).to.equal('nosniff');
        expect(r.headers.get('strict-transport-security')).to.equal('max-age=31536000; includeSubDomains');
      }
    });

    it('/mcp answers 401 on a missing or bad token without reading the body', async () => {
      const u = new URL(t.url);
      for (const auth of ['', 'Authorization: Bearer not-a-token\r\n']) {
        const socket = net.connect(Number(u.port), u.hostname);
        const answer = await new Promise<string>((resolve, reject) => {
          let got = '';
          socket.on('data', (d) => {
            got += d.toString('latin1');
            if (got.includes('\r\n\r\n')) resolve(got);
          });
          socket.on('error', reject);
          // a 1 MiB body announced, 10 bytes sent: the answer must not wait for the rest
          socket.write(
            `POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n${auth}Content-Length: 1048576\r\n\r\n{"jsonrpc"`,
          );
          setTimeout(() => reject(new Error('no answer before the body: the body was being read')), 3000);
        });
        socket.destroy();
        expect(answer).to.match(/^HTTP\/1\.1 401/);
      }
    });
  });

  describe('production start', () => {
    it('refuses to start with NODE_ENV=production when SII_CAF_KEYS_FILE, OAUTH_JWKS_FILE or SESSION_SECRET is unset', async () => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        MASTER_KEY: randomBytes(32).toString('base64'),
        // nothing listens there: the refusal must come before any connection
        DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none',
        REDIS_URL: 'redis://127.0.0.1:1',
        API_PORT: '0',
      };
      const child = spawn(process.execPath, ['--import', 'tsx', 'services/api/src/main.ts'], {
        cwd: ROOT,
        env,
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += String(d)));
      child.stdout.on('data', (d) => (stderr += String(d)));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).to.not.equal(0);
      for (const name of ['SII_CAF_KEYS_FILE', 'OAUTH_JWKS_FILE', 'SESSION_SECRET'])
        expect(stderr).to.contain(name);
      expect(stderr).to.contain('NODE_ENV=production');
      expect(stderr).to.not.contain('ECONNREFUSED');
    });
  });
});
