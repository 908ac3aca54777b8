/**
 * Issue 28, accounts, over HTTP with a real PostgreSQL, Redis and a local SMTP receiver: a seeded
 * owner without a password is invited (only the token's holder sets it; signing up with the
 * address no longer claims it); password change; password reset by e-mail without account
 * enumeration and bounded per hour.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { SmtpSink } from '../../webhooks/test/support/smtp';
import { call, DASHBOARD_ORIGIN, startTestApi, type TestApi } from './support/test-api';

const ORIGIN = { Origin: DASHBOARD_ORIGIN };
const cookieOf = (h: Headers): string => /dte_session=([^;]+)/.exec(h.get('set-cookie') ?? '')![1]!;
const email = () => `u-${randomUUID()}@empresa.cl`;

describe('hardening: invitations, password change and reset (issue 28)', function () {
  this.timeout(180_000);
  let t: TestApi;
  let smtp: SmtpSink;

  const signUp = async (address: string, password: string) =>
    call<{ code?: string }>(t.url, 'POST', '/auth/signup', {
      json: { email: address, password },
      headers: ORIGIN,
    });
  const login = async (address: string, password: string) =>
    call<{ code?: string }>(t.url, 'POST', '/auth/login', {
      json: { email: address, password },
      headers: ORIGIN,
    });
  const me = (cookie: string) => call(t.url, 'GET', '/auth/me', { cookie });
  const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address));
  const waitMails = async (address: string, n: number) => {
    for (let i = 0; i < 100 && mailsTo(address).length < n; i++) await new Promise((r) => setTimeout(r, 50));
    return mailsTo(address);
  };

  before(async () => {
    smtp = await new SmtpSink().start();
    t = await startTestApi({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'DTE <dte@test.local>' } });
  });
  after(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('a seeded owner without a password is invited: a stranger signing up with the address gets nothing; the token holder sets the password once', async () => {
    const owner = email();
    const seeded = await t.seed({ ownerEmail: owner });
    expect(seeded.invitation_token).to.match(/^inv_/);
    // the stranger who signs up first with the owner's address does not become the owner
    const stranger = await signUp(owner, 'clave-del-intruso-1');
    expect(stranger.status, stranger.text).to.equal(400);
    expect((await login(owner, 'clave-del-intruso-1')).status).to.equal(401);
    const [{ password_hash }] = await t.db.dataSource.query(
      'SELECT password_hash FROM users WHERE email = $1',
      [owner],
    );
    expect(password_hash).to.equal(null);
    // a wrong token changes nothing; the right one sets the password, once
    const accept = (token: string, password: string) =>
      call<{ user?: { email: string } }>(t.url, 'POST', '/auth/invitacion', {
        json: { token, password, nombre: 'Dueña' },
        headers: ORIGIN,
      });
    expect((await accept('inv_no-existe', 'clave-de-la-duena-1')).status).to.equal(400);
    const ok = await accept(seeded.invitation_token!, 'clave-de-la-duena-1');
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.user).to.include({ email: owner });
    const signedIn = await login(owner, 'clave-de-la-duena-1');
    expect(signedIn.status).to.equal(200);
    const session = await me(cookieOf(signedIn.headers));
    expect(session.body.organizacion_actual).to.equal(seeded.organization_id);
    const again = await accept(seeded.invitation_token!, 'otra-clave-larga-2');
    expect(again.status).to.equal(400);
    expect(again.text).to.contain('/token');
    expect((await login(owner, 'otra-clave-larga-2')).status).to.equal(401);
  });

  it('changes the password with the current one: a wrong one is refused; every other session ends', async () => {
    const address = email();
    const up = await signUp(address, 'clave-inicial-123');
    expect(up.status, up.text).to.equal(201);
    const first = cookieOf(up.headers);
    const second = cookieOf((await login(address, 'clave-inicial-123')).headers);
    const change = (cookie: string, actual: string, nueva: string) =>
      call(t.url, 'PUT', '/auth/password', { cookie, json: { actual, nueva }, headers: ORIGIN });
    const wrong = await change(first, 'no-es-la-clave', 'clave-nueva-4567');
    expect(wrong.status, wrong.text).to.equal(400);
    expect(wrong.text).to.contain('/actual');
    const ok = await change(first, 'clave-inicial-123', 'clave-nueva-4567');
    expect(ok.status, ok.text).to.equal(204);
    expect((await me(second)).status).to.equal(401);
    expect((await me(first)).status).to.equal(401);
    expect((await me(cookieOf(ok.headers))).status).to.equal(200);
    expect((await login(address, 'clave-inicial-123')).status).to.equal(401);
    expect((await login(address, 'clave-nueva-4567')).status).to.equal(200);
  });

  it('resets a forgotten password by e-mail: the same answer for any address, at most 3 mails an hour, one use, sessions end', async () => {
    const address = email();
    const up = await signUp(address, 'clave-olvidada-1');
    expect(up.status).to.equal(201);
    const session = cookieOf(up.headers);
    const forgot = (e: string) =>
      call<{ mensaje: string }>(t.url, 'POST', '/auth/password/olvido', {
        json: { email: e },
        headers: ORIGIN,
      });
    const unknown = email();
    const a = await forgot(unknown);
    const b = await forgot(address.toUpperCase());
    expect([a.status, b.status]).to.deep.equal([202, 202]);
    expect(a.body).to.deep.equal(b.body);
    const [mail] = await waitMails(address, 1);
    expect(mailsTo(unknown)).to.have.length(0);
    const token = /rst_[A-Za-z0-9_-]{43}/.exec(mail!.raw.replace(/=\r?\n/g, ''))![0];
    // three an hour: the fourth and fifth are answered the same and send nothing
    for (let i = 0; i < 4; i++) expect((await forgot(address)).body).to.deep.equal(a.body);
    await new Promise((r) => setTimeout(r, 500));
    expect(mailsTo(address)).to.have.length(3);
    const reset = (tok: string, nueva: string) =>
      call(t.url, 'POST', '/auth/password/restablecer', { json: { token: tok, nueva }, headers: ORIGIN });
    expect((await reset('rst_inventado', 'clave-restablecida-1')).status).to.equal(400);
    const ok = await reset(token, 'clave-restablecida-1');
    expect(ok.status, ok.text).to.equal(204);
    expect((await me(session)).status).to.equal(401);
    expect((await login(address, 'clave-olvidada-1')).status).to.equal(401);
    expect((await login(address, 'clave-restablecida-1')).status).to.equal(200);
    // one use; and the other mailed tokens were spent with it
    expect((await reset(token, 'otra-clave-larga-9')).status).to.equal(400);
    const others = (await waitMails(address, 3))
      .map((m) => /rst_[A-Za-z0-9_-]{43}/.exec(m.raw.replace(/=\r?\n/g, ''))![0])
      .filter((x) => x !== token);
    for (const other of others) expect((await reset(other, 'otra-clave-larga-9')).status).to.equal(400);
  });
});
