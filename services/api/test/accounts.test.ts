import { expect } from 'chai';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { audit } from '@dte/accounts';
import {
  call,
  DASHBOARD_ORIGIN,
  enrolAtSii,
  newRut,
  p12Form,
  simAdmin,
  startTestApi,
  testP12,
  type TestApi,
} from './support/test-api';

const execFileP = promisify(execFile);
const ORIGIN = { Origin: DASHBOARD_ORIGIN };
const PASSWORD = 'clave-segura-123';

/** The session cookie value a Set-Cookie answer carries, and its attributes. */
function sessionFrom(headers: Headers): { value: string; attrs: string } {
  const set = headers.getSetCookie().find((c) => c.startsWith('dte_session='));
  if (!set) throw new Error(`no session cookie in ${headers.getSetCookie().join(' | ')}`);
  const [pair, ...attrs] = set.split(';');
  return { value: pair.slice('dte_session='.length), attrs: attrs.join(';') };
}

let emailCounter = 0;
const newEmail = () => `u${Date.now()}-${(emailCounter += 1)}@empresa.cl`;

async function signUp(
  t: TestApi,
  email = newEmail(),
): Promise<{ cookie: string; userId: string; email: string }> {
  const res = await call(t.url, 'POST', '/auth/signup', {
    json: { email, password: PASSWORD, nombre: 'Ana' },
    headers: ORIGIN,
  });
  if (res.status !== 201) throw new Error(`signup ${res.status} ${res.text}`);
  return { cookie: sessionFrom(res.headers).value, userId: (res.body.user as { id: string }).id, email };
}

/** Marks a RUT in the simulator's taxpayer register. */
async function siiSituation(t: TestApi, rut: string, estado: string, razonSocial = 'EMPRESA DE PRUEBA SPA') {
  await simAdmin(t, 'PUT', `/admin/contribuyentes/${rut}`, { estado, razonSocial });
}

/** The signer whose certificate proves control of the RUTs onboarded here (issue 28). */
const SIGNER = newRut();

/** The SII (simulator) authorizes SIGNER for the company; the proof of control to send with it. */
async function authorizedSigner(t: TestApi, rut: string) {
  await enrolAtSii(t, rut, { senders: [SIGNER] });
  return { p12_base64: testP12(SIGNER).toString('base64'), password: 'secreto' };
}

async function onboard(t: TestApi, cookie: string, rut = newRut()) {
  await siiSituation(t, rut, 'activo');
  const certificado = await authorizedSigner(t, rut);
  const res = await call(t.url, 'POST', '/organizations', {
    cookie,
    json: { rut, certificado },
    headers: ORIGIN,
  });
  if (res.status !== 201) throw new Error(`onboarding ${res.status} ${res.text}`);
  return { rut, org: res.body as { id: string; company_id: string; razon_social: string } };
}

const count = async (t: TestApi, table: string) =>
  Number((await t.db.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n);

describe('accounts, onboarding, API keys, catalogs and audit (issue 14)', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi({ env: { LOGIN_MAX_FAILURES: '3' } });
  });
  after(async () => t?.close());

  describe('sign-up, login, logout, sessions', () => {
    it('signs up, sets an HttpOnly SameSite=Strict session cookie, and /auth/me answers the user', async () => {
      const email = newEmail();
      const res = await call(t.url, 'POST', '/auth/signup', {
        json: { email, password: PASSWORD },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(201);
      const { value, attrs } = sessionFrom(res.headers);
      expect(value).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(attrs).to.include('HttpOnly').and.include('SameSite=Strict').and.include('Path=/');
      const me = await call(t.url, 'GET', '/auth/me', { cookie: value });
      expect(me.status).to.equal(200);
      expect(me.body.user).to.include({ email });
      expect(me.body.organizaciones).to.deep.equal([]);
      const hash = await t.db.dataSource.query('SELECT password_hash FROM users WHERE email = $1', [email]);
      expect(hash[0].password_hash).to.match(/^scrypt\$131072\$8\$1\$/);
    });

    it('refuses a second account with the same e-mail and a short password (validation_failed), nothing written', async () => {
      const { email } = await signUp(t);
      const before = await count(t, 'users');
      for (const json of [
        { email, password: PASSWORD },
        { email: newEmail(), password: 'corta' },
      ]) {
        const res = await call(t.url, 'POST', '/auth/signup', { json, headers: ORIGIN });
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      expect(await count(t, 'users')).to.equal(before);
    });

    it('answers a wrong password with 401 unauthorized and no cookie; the right one logs in with a new session id', async () => {
      const { email, cookie } = await signUp(t);
      const bad = await call(t.url, 'POST', '/auth/login', {
        json: { email, password: 'otra-clave-123' },
        headers: ORIGIN,
      });
      expect(bad.status).to.equal(401);
      expect(bad.body.code).to.equal('unauthorized');
      expect(bad.headers.getSetCookie()).to.deep.equal([]);
      const good = await call(t.url, 'POST', '/auth/login', {
        json: { email: email.toUpperCase(), password: PASSWORD },
        cookie,
        headers: ORIGIN,
      });
      expect(good.status, good.text).to.equal(200);
      const fresh = sessionFrom(good.headers).value;
      expect(fresh).to.not.equal(cookie);
      // rotation: the session sent along with the login is gone
      expect((await call(t.url, 'GET', '/auth/me', { cookie })).status).to.equal(401);
      expect((await call(t.url, 'GET', '/auth/me', { cookie: fresh })).status).to.equal(200);
    });

    it('locks the account after 3 wrong passwords (429 rate_limit even with the right one), audited', async () => {
      const { email, cookie } = await signUp(t);
      await onboard(t, cookie);
      for (let i = 0; i < 3; i++) {
        const res = await call(t.url, 'POST', '/auth/login', {
          json: { email, password: `mala-clave-${i}xx` },
          headers: ORIGIN,
        });
        expect(res.status).to.equal(401);
      }
      const locked = await call(t.url, 'POST', '/auth/login', {
        json: { email, password: PASSWORD },
        headers: ORIGIN,
      });
      expect(locked.status).to.equal(429);
      expect(locked.body.code).to.equal('rate_limit');
      expect(locked.body.detail).to.include({ locked: true });
      expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 900);
      const actions = (
        await t.db.dataSource.query(
          `SELECT action FROM audit_log a JOIN users u ON a.actor = 'user:' || u.id WHERE u.email = $1 ORDER BY a.id`,
          [email],
        )
      ).map((r: { action: string }) => r.action);
      expect(actions).to.include.members(['session.login_failed', 'session.locked']);
    });

    it('logs out: 204, the cookie is cleared and no longer works', async () => {
      const { cookie } = await signUp(t);
      const res = await call(t.url, 'POST', '/auth/logout', { cookie, headers: ORIGIN });
      expect(res.status).to.equal(204);
      expect(res.headers.getSetCookie()[0]).to.match(/^dte_session=;.*Max-Age=0/);
      const me = await call(t.url, 'GET', '/auth/me', { cookie });
      expect(me.status).to.equal(401);
      expect(me.body.code).to.equal('unauthorized');
    });

    it('expires an idle session (401 unauthorized)', async () => {
      const { cookie } = await signUp(t);
      expect((await call(t.url, 'GET', '/auth/me', { cookie })).status).to.equal(200);
      t.advanceClock((t.config.sessionIdleSec + 1) * 1000);
      const res = await call(t.url, 'GET', '/auth/me', { cookie });
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('unauthorized');
    });

    it('refuses cross-origin login and session mutations: csrf_origin_mismatch, csrf_blocked; nothing changed', async () => {
      const { email, cookie } = await signUp(t);
      let res = await call(t.url, 'POST', '/auth/login', {
        json: { email, password: PASSWORD },
        headers: { Origin: 'https://evil.test' },
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('csrf_origin_mismatch');
      res = await call(t.url, 'POST', '/auth/login', { json: { email, password: PASSWORD } });
      expect(res.body.code).to.equal('csrf_blocked');
      const orgs = await count(t, 'organizations');
      const rut = newRut();
      await siiSituation(t, rut, 'activo');
      res = await call(t.url, 'POST', '/organizations', {
        cookie,
        json: { rut },
        headers: { Origin: 'https://evil.test', 'Sec-Fetch-Site': 'cross-site' },
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('csrf_blocked');
      expect(await count(t, 'organizations')).to.equal(orgs);
    });
  });

  describe('cookie flags on https, and the dashboard pages', () => {
    it('names the cookie __Host-dte_session with Secure when SESSION_COOKIE_SECURE, and reads only that name', async () => {
      const secure = await startTestApi({ env: { SESSION_COOKIE_SECURE: 'true' } });
      try {
        const res = await call(secure.url, 'POST', '/auth/signup', {
          json: { email: newEmail(), password: PASSWORD },
          headers: ORIGIN,
        });
        expect(res.status).to.equal(201);
        const set = res.headers.getSetCookie()[0];
        expect(set).to.match(
          /^__Host-dte_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/,
        );
        const id = set.split(';')[0].split('=')[1];
        const ok = await fetch(`${secure.url}/auth/me`, { headers: { Cookie: `__Host-dte_session=${id}` } });
        expect(ok.status).to.equal(200);
        const plain = await fetch(`${secure.url}/auth/me`, { headers: { Cookie: `dte_session=${id}` } });
        expect(plain.status).to.equal(401);
      } finally {
        await secure.close();
      }
    });

    it('serves the dashboard pages in es-CL with a strict Content-Security-Policy', async () => {
      const origin = new URL(t.url).origin;
      const res = await fetch(`${origin}/dashboard/ingresar`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.headers.get('content-security-policy'))
        .to.include("script-src 'self'")
        .and.include("frame-ancestors 'none'");
      const html = await res.text();
      expect(html).to.include('<html lang="es-CL">').and.include('Crear una cuenta');
      const js = await fetch(`${origin}/dashboard/static/app.js`);
      expect(js.headers.get('content-type')).to.match(/^text\/javascript/);
      const home = await fetch(`${origin}/dashboard`, { redirect: 'manual' });
      expect(home.status).to.equal(302);
      expect(home.headers.get('location')).to.equal('/dashboard/documentos');
      expect((await fetch(`${origin}/dashboard/no-existe`)).status).to.equal(404);
      // the icon browsers ask for at the root: no 404 in any page's console
      const icon = await fetch(`${origin}/favicon.ico`);
      expect(icon.status).to.equal(200);
      expect(icon.headers.get('content-type')).to.match(/^image\/svg\+xml/);
      expect(html).to.include('rel="icon"');
      // the page modules are served as JavaScript too (static/pages/, static/lib/)
      const mod = await fetch(`${origin}/dashboard/static/pages/documentos.js`);
      expect(mod.status).to.equal(200);
      expect(mod.headers.get('content-type')).to.match(/^text\/javascript/);
    });

    it('answers TRACE and other methods no route serves with 405 and Allow, on any path (not 404)', async () => {
      const { origin } = new URL(t.url);
      const raw = (method: string, p: string) =>
        new Promise<{ status: number; allow: string | undefined }>((resolve, reject) => {
          const req = http.request(`${origin}${p}`, { method }, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow }));
          });
          req.on('error', reject);
          req.end();
        });
      for (const [method, p] of [
        ['TRACE', '/api/v1/dtes'],
        ['TRACE', '/no/such/path'],
        ['TRACE', '/dashboard/documentos'],
        ['PROPFIND', '/api/v1/dtes'],
      ] as const) {
        const res = await raw(method, p);
        expect(res.status, `${method} ${p}`).to.equal(405);
        expect(res.allow).to.include('GET').and.include('POST').and.not.include('TRACE');
      }
      // served methods keep their answers: an unknown route is still 404 not_found
      expect((await raw('GET', '/api/v1/no-such-route')).status).to.equal(404);
    });
  });

  describe('onboarding', () => {
    it('creates the organization of an active RUT: the caller is owner and the session acts in it', async () => {
      const { cookie } = await signUp(t);
      const { rut, org } = await onboard(t, cookie);
      expect(org.razon_social).to.equal('EMPRESA DE PRUEBA SPA');
      const me = await call(t.url, 'GET', '/organizations/me', { cookie });
      expect(me.status, me.text).to.equal(200);
      expect(me.body).to.include({ rut, rol: 'owner', prod_enabled: false, situacion_estado: 'activo' });
      expect(me.body.empresas).to.have.length(1);
      const caf = await call(t.url, 'GET', '/caf', { cookie });
      expect(caf.status).to.equal(200);
    });

    it('refuses a bad check digit (validation_failed) and a blocked RUT (409 with estado): nothing written', async () => {
      const { cookie } = await signUp(t);
      const before = await count(t, 'organizations');
      const rut = newRut();
      const bad = `${rut.slice(0, -1)}${rut.endsWith('1') ? '2' : '1'}`;
      let res = await call(t.url, 'POST', '/organizations', { cookie, json: { rut: bad }, headers: ORIGIN });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      // unknown to the SII
      res = await call(t.url, 'POST', '/organizations', { cookie, json: { rut }, headers: ORIGIN });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('situacion_tributaria.bloqueada');
      expect(res.body.detail).to.include({ estado: 'rut_inexistente' });
      expect(res.body.estado, "the spec's body field, at the top level").to.equal('rut_inexistente');
      await siiSituation(t, rut, 'sin_inicio_actividades');
      res = await call(t.url, 'POST', '/organizations', { cookie, json: { rut }, headers: ORIGIN });
      expect(res.body.detail).to.include({ estado: 'sin_inicio_actividades' });
      expect(res.body.estado).to.equal('sin_inicio_actividades');
      expect(await count(t, 'organizations')).to.equal(before);
      expect((await call(t.url, 'GET', '/auth/me', { cookie })).body.organizaciones).to.deep.equal([]);
    });

    it('refuses a second organization for the same RUT with 409 empresa.conflict, nothing changed', async () => {
      const first = await signUp(t);
      const { rut } = await onboard(t, first.cookie);
      const second = await signUp(t);
      const before = await count(t, 'organizations');
      const res = await call(t.url, 'POST', '/organizations', {
        cookie: second.cookie,
        json: { rut },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('empresa.conflict');
      expect(await count(t, 'organizations')).to.equal(before);
    });

    it('revalidates the SII situation (owner/admin); a member gets 403; a blocked RUT answers 409 and is stored', async () => {
      const owner = await signUp(t);
      const { rut, org } = await onboard(t, owner.cookie);
      let res = await call(t.url, 'POST', '/organizations/me/revalidar-situacion', {
        cookie: owner.cookie,
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ rut, estado: 'activo' });
      const member = await signUp(t);
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'member')`,
        [member.userId, org.id],
      );
      const memberCookie = await t.sessionCookie(member.userId, org.id);
      res = await call(t.url, 'POST', '/organizations/me/revalidar-situacion', {
        cookie: memberCookie,
        headers: ORIGIN,
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('forbidden');
      expect(res.body).to.not.have.property('next_action');
      await siiSituation(t, rut, 'sin_inicio_actividades');
      res = await call(t.url, 'POST', '/organizations/me/revalidar-situacion', {
        cookie: owner.cookie,
        headers: ORIGIN,
      });
      expect(res.status).to.equal(409);
      expect(res.body.detail).to.include({ estado: 'sin_inicio_actividades' });
      expect(res.body.estado).to.equal('sin_inicio_actividades');
      const stored = await t.db.dataSource.query('SELECT situacion_estado FROM organizations WHERE id = $1', [
        org.id,
      ]);
      expect(stored[0].situacion_estado).to.equal('sin_inicio_actividades');
    });

    it('answers situacion_tributaria.rate_limit (429) when the SII limits queries, and writes nothing', async () => {
      const server = http.createServer((_req, res) => res.writeHead(429, { 'Retry-After': '30' }).end());
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const limited = await startTestApi({
        env: { SII_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
      });
      try {
        const u = await signUp(limited);
        const res = await call(limited.url, 'POST', '/organizations', {
          cookie: u.cookie,
          json: { rut: newRut() },
          headers: ORIGIN,
        });
        expect(res.status).to.equal(429);
        expect(res.body.code).to.equal('situacion_tributaria.rate_limit');
        expect(res.body.detail).to.include({ retry_after_seconds: 30 });
        expect(res.body.retry_after_seconds).to.equal(30);
        expect(await count(limited, 'organizations')).to.equal(0);
      } finally {
        await limited.close();
        server.close();
      }
    });

    it('answers org.rut_missing when revalidating an organization without RUT', async () => {
      const u = await signUp(t);
      const [o] = await t.db.dataSource.query(
        `INSERT INTO organizations (name) VALUES ('sin rut') RETURNING id`,
      );
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`,
        [u.userId, o.id],
      );
      const res = await call(t.url, 'POST', '/organizations/me/revalidar-situacion', {
        cookie: await t.sessionCookie(u.userId, o.id),
        headers: ORIGIN,
      });
      expect(res.status).to.equal(412);
      expect(res.body.code).to.equal('org.rut_missing');
    });
  });

  describe('access requests', () => {
    it('requests access, the owner sees the token and approves; the requester becomes member', async () => {
      const owner = await signUp(t);
      const { rut, org } = await onboard(t, owner.cookie);
      const asker = await signUp(t);
      let res = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
        cookie: asker.cookie,
        json: { rut },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ estado: 'pendiente', organization_id: org.id });
      expect(res.body).to.not.have.property('token');
      const again = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
        cookie: asker.cookie,
        json: { rut },
        headers: ORIGIN,
      });
      expect(again.status).to.equal(200);
      expect(again.body.id).to.equal(res.body.id);
      const list = await call<{ data: { token: string; requester_email: string }[] }>(
        t.url,
        'GET',
        '/organizations/me/solicitudes-acceso',
        {
          cookie: owner.cookie,
        },
      );
      expect(list.body.data).to.have.length(1);
      expect(list.body.data[0].requester_email).to.equal(asker.email);
      // not an owner of that organization: 403, the request stays pending
      res = await call(t.url, 'POST', '/organizations/solicitudes-acceso/decidir', {
        cookie: asker.cookie,
        json: { token: list.body.data[0].token, decision: 'aprobar' },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('forbidden');
      res = await call(t.url, 'POST', '/organizations/solicitudes-acceso/decidir', {
        cookie: owner.cookie,
        json: { token: list.body.data[0].token, decision: 'aprobar', rol: 'admin' },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.estado).to.equal('aprobada');
      const me = await call<{ organizaciones: { organization_id: string; role: string }[] }>(
        t.url,
        'GET',
        '/auth/me',
        {
          cookie: asker.cookie,
        },
      );
      expect(me.body.organizaciones).to.deep.include({
        organization_id: org.id,
        name: 'EMPRESA DE PRUEBA SPA',
        rut,
        role: 'admin',
      });
    });

    it('answers invalid_rut (bad check digit), empresa.not_found, access_request.not_found and access_request.expired', async () => {
      const owner = await signUp(t);
      const { rut } = await onboard(t, owner.cookie);
      const asker = await signUp(t);
      const bad = `${rut.slice(0, -1)}${rut.endsWith('1') ? '2' : '1'}`;
      let res = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
        cookie: asker.cookie,
        json: { rut: bad },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('invalid_rut');
      res = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
        cookie: asker.cookie,
        json: { rut: newRut() },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('empresa.not_found');
      res = await call(t.url, 'POST', '/organizations/solicitudes-acceso/decidir', {
        cookie: owner.cookie,
        json: { token: 'no-existe', decision: 'aprobar' },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('access_request.not_found');
      res = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
        cookie: asker.cookie,
        json: { rut },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(201);
      const [{ token }] = await t.db.dataSource.query('SELECT token FROM access_requests WHERE id = $1', [
        res.body.id,
      ]);
      await t.db.dataSource.query(
        `UPDATE access_requests SET created_at = now() - interval '8 days' WHERE id = $1`,
        [res.body.id],
      );
      res = await call(t.url, 'POST', '/organizations/solicitudes-acceso/decidir', {
        cookie: owner.cookie,
        json: { token, decision: 'aprobar' },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(410);
      expect(res.body.code).to.equal('access_request.expired');
      const members = await t.db.dataSource.query('SELECT 1 FROM memberships WHERE user_id = $1', [
        asker.userId,
      ]);
      expect(members).to.have.length(0);
    });

    it('caps requests at 5 an hour per requester (429 access_request.rate_limit)', async () => {
      const asker = await signUp(t);
      const ruts: string[] = [];
      for (let i = 0; i < 6; i++) {
        const o = await signUp(t);
        ruts.push((await onboard(t, o.cookie)).rut);
      }
      for (let i = 0; i < 5; i++) {
        const res = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
          cookie: asker.cookie,
          json: { rut: ruts[i] },
          headers: ORIGIN,
        });
        expect(res.status).to.equal(201);
      }
      const res = await call(t.url, 'POST', '/organizations/solicitar-acceso', {
        cookie: asker.cookie,
        json: { rut: ruts[5] },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(429);
      expect(res.body.code).to.equal('access_request.rate_limit');
    });
  });

  describe('API keys and the audit log', () => {
    it('creates a key shown once, lists it by prefix with last_used_at, revokes and rotates it; all audited', async () => {
      const owner = await signUp(t);
      const { org, rut } = await onboard(t, owner.cookie);
      let res = await call(t.url, 'POST', '/api-keys', {
        cookie: owner.cookie,
        json: {
          nombre: 'ERP',
          environment: 'cert',
          scopes: ['dte:read', 'certificates:write', 'certificates:read'],
        },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(201);
      const key = res.body.key as string;
      const id = res.body.id as string;
      expect(key).to.match(/^sk_cert_/);
      expect(key.startsWith(res.body.prefix as string)).to.equal(true);
      expect(res.body.last_used_at).to.equal(null);
      // the key works, and records its use
      expect((await call(t.url, 'GET', `/sii/empresas/${org.company_id}`, { key })).body).to.include({ rut });
      const up = await call(t.url, 'POST', '/certificates', {
        key,
        form: p12Form(testP12(rut), 'secreto', 'principal'),
      });
      expect(up.status, up.text).to.equal(201);
      const list = await call<{ data: Record<string, unknown>[] }>(t.url, 'GET', '/api-keys', {
        cookie: owner.cookie,
      });
      expect(list.body.data).to.have.length(1);
      expect(list.body.data[0]).to.not.have.property('key');
      expect(list.body.data[0].last_used_at).to.be.a('string');
      expect(JSON.stringify(list.body)).to.not.include(key.slice(16));
      res = await call(t.url, 'POST', `/api-keys/${id}/rotate`, { cookie: owner.cookie, headers: ORIGIN });
      expect(res.status).to.equal(201);
      const rotated = res.body.key as string;
      expect(res.body.scopes).to.deep.equal(['dte:read', 'certificates:write', 'certificates:read']);
      let use = await call(t.url, 'GET', '/certificates', { key });
      expect(use.body.code).to.equal('api_key_revoked');
      expect((await call(t.url, 'GET', '/certificates', { key: rotated })).status).to.equal(200);
      res = await call(t.url, 'POST', `/api-keys/${res.body.id}/revoke`, {
        cookie: owner.cookie,
        headers: ORIGIN,
      });
      expect(res.status).to.equal(200);
      expect(res.body.revoked_at).to.be.a('string');
      use = await call(t.url, 'GET', '/certificates', { key: rotated });
      expect(use.status).to.equal(401);
      expect(use.body.code).to.equal('api_key_revoked');

      const audit = await call<{ data: { action: string; actor: string }[] }>(t.url, 'GET', '/audit-log', {
        cookie: owner.cookie,
      });
      expect(audit.status).to.equal(200);
      const actions = audit.body.data.map((a) => a.action);
      expect(actions).to.include.members([
        'organization.created',
        'api_key.created',
        'certificate.uploaded',
        'api_key.rotated',
        'api_key.revoked',
      ]);
      expect(audit.body.data.find((a) => a.action === 'certificate.uploaded')!.actor).to.equal(`key:${id}`);
    });

    it('lets only owners and admins manage keys, only owners read the audit log (403 forbidden), and never Bearer', async () => {
      const owner = await signUp(t);
      const { org } = await onboard(t, owner.cookie);
      const member = await signUp(t);
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'member')`,
        [member.userId, org.id],
      );
      const cookie = await t.sessionCookie(member.userId, org.id);
      const before = await count(t, 'api_keys');
      let res = await call(t.url, 'POST', '/api-keys', {
        cookie,
        json: { nombre: 'x', environment: 'cert', scopes: ['dte:read'] },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('forbidden');
      expect(await count(t, 'api_keys')).to.equal(before);
      res = await call(t.url, 'GET', '/audit-log', { cookie });
      expect(res.status).to.equal(403);
      const seeded = await t.seed();
      res = await call(t.url, 'GET', '/api-keys', { key: seeded.api_key });
      expect(res.status).to.equal(401);
    });

    it('reads the audit log newest first by number across pages (ids crossing a power of ten), each entry once, in readable names', async () => {
      const owner = await signUp(t);
      const { org } = await onboard(t, owner.cookie);
      const ds = t.db.dataSource;
      const entry = (n: number) =>
        audit(ds, {
          organizationId: org.id,
          actor: `user:${owner.userId}`,
          action: 'company.updated',
          detail: { n },
        });
      for (let n = 0; n < 3; n += 1) await entry(n);
      // jump the id to just below the next power of ten: ordered as text, "1000" would come after "999"
      const [{ last }] = await ds.query(`SELECT last_value::text AS last FROM audit_log_id_seq`);
      const next = 10 ** String(Number(last) + 10).length;
      await ds.query(`SELECT setval('audit_log_id_seq', $1::bigint)`, [next - 3]);
      for (let n = 3; n < 9; n += 1) await entry(n);
      const ours = async (cursor?: string) =>
        call<{
          data: { id: string; action: string; actor_nombre: string; detail: { n?: number } }[];
          next_cursor: string | null;
        }>(t.url, 'GET', `/audit-log?limit=4${cursor ? `&cursor=${cursor}` : ''}`, { cookie: owner.cookie });
      const seen: { id: string; n?: number }[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages += 1) {
        const res = await ours(cursor);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.length).to.be.at.most(4);
        for (const a of res.body.data) seen.push({ id: a.id, n: a.detail.n });
        if (!res.body.next_cursor) break;
        cursor = res.body.next_cursor;
      }
      const ids = seen.map((a) => BigInt(a.id));
      expect(new Set(seen.map((a) => a.id)).size, 'no entry repeated').to.equal(seen.length);
      expect(
        ids.every((id, i) => i === 0 || id < ids[i - 1]!),
        `numeric order: ${seen.map((a) => a.id)}`,
      ).to.equal(true);
      // our nine entries, newest first, none skipped; then the onboarding's own entries
      expect(seen.filter((a) => a.n !== undefined).map((a) => a.n)).to.deep.equal([
        8, 7, 6, 5, 4, 3, 2, 1, 0,
      ]);
      expect(seen.map((a) => a.id))
        .to.include(String(next - 2))
        .and.include(String(next));
      const first = await ours();
      expect(first.body.data[0]!.actor_nombre).to.include(owner.email);
    });

    it('lets an owner change roles and remove members, never the last owner; a member may not (403)', async () => {
      const owner = await signUp(t);
      const { org } = await onboard(t, owner.cookie);
      const other = await signUp(t);
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'member')`,
        [other.userId, org.id],
      );
      const otherCookie = await t.sessionCookie(other.userId, org.id);
      let res = await call(t.url, 'DELETE', `/organizations/me/miembros/${owner.userId}`, {
        cookie: otherCookie,
        headers: ORIGIN,
      });
      expect(res.status).to.equal(403);
      res = await call(t.url, 'PUT', `/organizations/me/miembros/${owner.userId}`, {
        cookie: owner.cookie,
        json: { rol: 'admin' },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      res = await call(t.url, 'PUT', `/organizations/me/miembros/${other.userId}`, {
        cookie: owner.cookie,
        json: { rol: 'admin' },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ user_id: other.userId, role: 'admin' });
      // the role is read on each request: the admin may now list API keys
      expect((await call(t.url, 'GET', '/api-keys', { cookie: otherCookie })).status).to.equal(200);
      res = await call(t.url, 'DELETE', `/organizations/me/miembros/${other.userId}`, {
        cookie: owner.cookie,
        headers: ORIGIN,
      });
      expect(res.status).to.equal(200);
      // removed: the session no longer acts in the organization
      const after = await call(t.url, 'GET', '/api-keys', { cookie: otherCookie });
      expect(after.status).to.equal(412);
      expect(after.body.code).to.equal('org.required');
    });

    it('enables production with the operator command, audited with the operator name', async () => {
      const owner = await signUp(t);
      const { org } = await onboard(t, owner.cookie);
      const { stdout } = await execFileP(
        'npx',
        [
          'tsx',
          'src/cli/enable-production.ts',
          '--org',
          org.id,
          '--operator',
          'Operadora Uno',
          '--tipos',
          '33,61',
        ],
        {
          cwd: path.resolve(__dirname, '../../../packages/accounts'),
          env: { ...process.env, DATABASE_URL: t.config.databaseUrl, DATABASE_SCHEMA: t.db.schema },
        },
      );
      expect(JSON.parse(stdout)).to.deep.equal({
        organization_id: org.id,
        prod_enabled: true,
        prod_tipos: [33, 61],
      });
      const me = await call(t.url, 'GET', '/organizations/me', { cookie: owner.cookie });
      expect(me.body.prod_enabled).to.equal(true);
      const audit = await call<{ data: { action: string; actor: string }[] }>(t.url, 'GET', '/audit-log', {
        cookie: owner.cookie,
      });
      expect(audit.body.data[0]).to.include({
        action: 'organization.production_enabled',
        actor: 'operator:Operadora Uno',
      });
    });
  });

  describe('catalogs', () => {
    it('answers a company of the organization at /sii/empresas/:id and 404 empresa.not_found for another one', async () => {
      const a = await signUp(t);
      const { org, rut } = await onboard(t, a.cookie);
      const b = await signUp(t);
      const other = await onboard(t, b.cookie);
      let res = await call(t.url, 'GET', `/sii/empresas/${org.company_id}`, { cookie: a.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: org.company_id, rut });
      res = await call(t.url, 'GET', `/sii/empresas/${other.org.company_id}`, { cookie: a.cookie });
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('empresa.not_found');
    });

    it('adds a branch with its SII code, lists it at /sucursales, closes it; a member may not (403)', async () => {
      const a = await signUp(t);
      const { org, rut } = await onboard(t, a.cookie);
      let res = await call(t.url, 'POST', '/sucursales', {
        cookie: a.cookie,
        json: {
          nombre: 'Sucursal Centro',
          direccion: 'Huérfanos 1000',
          comuna: 'Santiago',
          codigo_sii: 81234567,
        },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ rut_emisor: rut, codigo_sii: 81234567 });
      const id = res.body.id as string;
      let list = await call<{ data: { id: string }[] }>(t.url, 'GET', '/sucursales', { cookie: a.cookie });
      expect(list.body.data.map((b) => b.id)).to.deep.equal([id]);
      const member = await signUp(t);
      await t.db.dataSource.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'member')`,
        [member.userId, org.id],
      );
      res = await call(t.url, 'DELETE', `/sucursales/${id}`, {
        cookie: await t.sessionCookie(member.userId, org.id),
        headers: ORIGIN,
      });
      expect(res.status).to.equal(403);
      res = await call(t.url, 'DELETE', `/sucursales/${id}`, { cookie: a.cookie, headers: ORIGIN });
      expect(res.status).to.equal(200);
      list = await call(t.url, 'GET', '/sucursales', { cookie: a.cookie });
      expect(list.body.data).to.deep.equal([]);
      res = await call(t.url, 'DELETE', `/sucursales/${id}`, { cookie: a.cookie, headers: ORIGIN });
      expect(res.status).to.equal(404);
    });

    it('edits the company issuer data (PUT /sii/empresas/:id), audited', async () => {
      const a = await signUp(t);
      const { org } = await onboard(t, a.cookie);
      const res = await call(t.url, 'PUT', `/sii/empresas/${org.company_id}`, {
        cookie: a.cookie,
        json: {
          giro: 'Ferretería',
          actividad_economica: 467300,
          resolucion_cert_numero: 0,
          resolucion_cert_fecha: '2024-01-15',
        },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(200);
      const get = await call(t.url, 'GET', `/sii/empresas/${org.company_id}`, { cookie: a.cookie });
      expect(get.body).to.include({
        giro: 'Ferretería',
        actividad_economica: 467300,
        resolucion_cert_fecha: '2024-01-15',
      });
      const other = await call(t.url, 'PUT', `/sii/empresas/00000000-0000-4000-8000-000000000000`, {
        cookie: a.cookie,
        json: { giro: 'X' },
        headers: ORIGIN,
      });
      expect(other.status).to.equal(404);
      expect(other.body.code).to.equal('empresa.not_found');
    });

    it('edits a counterpart and lists it as edited', async () => {
      const a = await signUp(t);
      await onboard(t, a.cookie);
      const rut = newRut();
      let res = await call(t.url, 'PUT', `/contrapartes/${rut}`, {
        cookie: a.cookie,
        json: {
          razon_social: 'CLIENTE UNO LTDA',
          giro: 'Comercio',
          comuna: 'Ñuñoa',
          correo: 'dte@cliente.cl',
        },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({
        rut,
        razon_social: 'CLIENTE UNO LTDA',
        origen: 'editada',
        comuna: 'Ñuñoa',
      });
      res = await call(t.url, 'PUT', `/contrapartes/12345678-0`, {
        cookie: a.cookie,
        json: { razon_social: 'X' },
        headers: ORIGIN,
      });
      expect(res.status).to.equal(400);
      const list = await call<{ data: { rut: string }[] }>(t.url, 'GET', '/contrapartes', {
        cookie: a.cookie,
      });
      expect(list.body.data.map((c) => c.rut)).to.deep.equal([rut]);
    });
  });
});
