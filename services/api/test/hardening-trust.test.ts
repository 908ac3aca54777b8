/**
 * Issue 28, the lows of the trust helper, over HTTP with a real PostgreSQL, Redis and the SII
 * simulator: an inbox event of one tenant does not write another tenant's documents; removing a
 * member revokes the API keys they created; correo_receptor cannot reach more than 5 mailboxes.
 */
import { randomUUID } from 'node:crypto';
import { santiagoDate } from '@dte/engine';
import { expect } from 'chai';
import {
  intercambio,
  invoice,
  makeSupplier,
  signed,
} from '../../../packages/reception/test/support/supplier';
import { uploadCaf } from './dtes-fixtures';
import { receivingCompany, registerPurchase } from './support/reception-world';
import {
  call,
  companyRut,
  dashboardMember,
  enrolAtSii,
  newRut,
  simAdmin,
  startTestApi,
  testP12,
  uploadCert,
  type TestApi,
} from './support/test-api';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('hardening: tenant writes and account lows (issue 28)', function () {
  this.timeout(180_000);
  let t: TestApi;
  /** organization A's key and its invoice 7 (first test) */
  let keyA = '';
  let dteA = '';
  const yesterday = () => santiagoDate(new Date(Date.now() - 86_400_000));

  /** the signers of the proof-of-control tests (their .p12 made before the api serves: it blocks) */
  const realSigner = newRut();
  const stranger = newRut();

  before(async () => {
    testP12(realSigner);
    testP12(stranger);
    // a mail server is configured (never reached here): resend-delivery reads its addresses
    t = await startTestApi({
      sim: { timings: { registerMs: 0, stepMs: 0 } },
      env: { SMTP_URL: 'smtp://127.0.0.1:9', MAIL_FROM: 'DTE <dte@test.local>' },
    });
  });
  after(async () => t?.close());

  it("an acknowledgement registered by one organization leaves another organization's document as it was", async () => {
    // organization A issued invoice 7 to B (its row in dtes); B receives it and acknowledges it
    const a = await t.seed({});
    const rutA = await companyRut(t, a.company_id);
    const certA = await uploadCert(t, a.api_key, rutA);
    const caf = await uploadCaf(t, a.api_key, rutA, {
      razonSocial: 'EMISOR A SPA',
      hasta: 10,
      fechaAutorizacion: yesterday(),
    });
    // B: a company with its certificate, enrolled at the SII
    const b = await receivingCompany(t);
    const rutB = b.rut;
    keyA = a.api_key;
    dteA = randomUUID();
    await t.db.dataSource.query(
      `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id, rut_emisor,
         rut_receptor, razon_social_receptor, fecha_emision, input, document, sii_status, idempotency_key, body_hash)
       VALUES ($1, $2, $3, 'cert', 33, 7, $4, $5, $6, $7, 'B SPA', current_date, '{}', '{}', 'ACEPTADO', $8, 'h')`,
      [dteA, a.organization_id, a.company_id, caf.id, certA.id, rutA, rutB, `k-${dteA}`],
    );
    // B receives A's invoice 7 by intercambio (a CAF the simulator's SII signed) and acknowledges it
    const supplier = makeSupplier(rutA, t.sim.siiKeys.cert);
    supplier.next = 7;
    const doc = invoice(supplier, rutB, 10_000);
    const received = await call<{ documentos: Doc[] }>(t.url, 'POST', '/recepcion/intercambio', {
      key: b.key,
      raw: intercambio(supplier, [signed(supplier, doc)], rutB).toString('latin1'),
      headers: { 'Content-Type': 'application/xml' },
    });
    expect(received.status, received.text).to.equal(201);
    await registerPurchase(t, { rutReceptor: rutB, rutEmisor: rutA, folio: 7, mntNeto: 10_000 });
    const ev = await call<Doc>(t.url, 'POST', `/recepcion/${received.body.documentos[0]!.id}/eventos`, {
      key: b.key,
      json: { accion: 'ACD', confirmar: true },
    });
    expect(ev.status, ev.text).to.equal(200);
    expect(ev.body).to.include({ acuse: 'ACD' });
    // A's document is A's: it learns the acknowledgement from its own RCV sync, not from B's write
    const [row] = await t.db.dataSource.query(`SELECT receptor_estado FROM dtes WHERE id = $1`, [dteA]);
    expect(row.receptor_estado).to.equal('sin_info');
  });

  it('removing a member revokes the API keys they created; the keys of the others keep working', async () => {
    const owner = await t.seed({
      ownerEmail: `own-${randomUUID()}@empresa.cl`,
      ownerPassword: 'clave-larga-1234',
    });
    const { userId: member, cookie: memberCookie } = await dashboardMember(
      t,
      owner.organization_id,
      'admin',
      {
        email: `mem-${randomUUID()}@empresa.cl`,
        nombre: 'Miembro',
      },
    );
    // the member made a key through the dashboard (created_by = the member)
    const made = await call<{ key?: string; api_key?: string }>(t.url, 'POST', '/api-keys', {
      cookie: memberCookie,
      json: { nombre: 'integración del miembro', environment: 'cert', scopes: ['dte:read'] },
      headers: { Origin: 'https://dashboard.test' },
    });
    expect(made.status, made.text).to.equal(201);
    const memberKey = (made.body.key ?? made.body.api_key) as string;
    expect((await call(t.url, 'GET', '/dtes', { key: memberKey })).status).to.equal(200);
    const ownerCookie = await t.sessionCookie(owner.user_id!, owner.organization_id);
    const removed = await call(t.url, 'DELETE', `/organizations/me/miembros/${member}`, {
      cookie: ownerCookie,
      headers: { Origin: 'https://dashboard.test' },
    });
    expect(removed.status, removed.text).to.be.oneOf([200, 204]);
    const after = await call<{ code: string }>(t.url, 'GET', '/dtes', { key: memberKey });
    expect(after.status).to.equal(401);
    expect((await call(t.url, 'GET', '/dtes', { key: owner.api_key })).status).to.equal(200);
    const [audit] = await t.db.dataSource.query(
      `SELECT detail FROM audit_log WHERE organization_id = $1 AND action = 'member.removed'`,
      [owner.organization_id],
    );
    expect(audit.detail).to.include({ api_keys_revoked: 1 });
  });

  it('correo_receptor: an entry with commas (one "address" nodemailer splits into six mailboxes) is refused', async () => {
    expect(dteA, 'the first test made the document').to.not.equal('');
    for (const correo of [
      'a,b,c,d,e,f@x.cl',
      'a@x.cl;b@y.cl',
      '"a@x.cl,b"@y.cl',
      'Ana <a@x.cl>',
      'g: a@x.cl, b@y.cl;',
    ]) {
      const res = await call<{ code: string }>(t.url, 'POST', `/dtes/${dteA}/resend-delivery`, {
        key: keyA,
        json: { correo_receptor: [correo] },
      });
      // the spec's answer for a bad e-mail on resend-delivery (issue 30): 422 validation_error
      expect(res.status, `${correo}: ${res.text}`).to.equal(422);
      expect(res.body.code).to.equal('validation_error');
      expect(res.text).to.contain('correo_receptor');
    }
    // six plain addresses: over the bound too; nothing was queued for any of these
    const six = Array.from({ length: 6 }, (_, i) => `r${i}@x.cl`);
    const res = await call(t.url, 'POST', `/dtes/${dteA}/resend-delivery`, {
      key: keyA,
      json: { correo_receptor: six },
    });
    expect(res.status, res.text).to.equal(422);
    const [n] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM dte_deliveries WHERE dte_id = $1`,
      [dteA],
    );
    expect(n.n).to.equal(0);
  });

  it('GET /dtes/muestras renders at most 60 PDFs, one batch per organization at a time', async () => {
    const o = await t.seed({});
    const rut = await companyRut(t, o.company_id);
    const cert = await uploadCert(t, o.api_key, rut);
    const issuer = makeSupplier(rut, t.sim.siiKeys.cert);
    const caf = await uploadCaf(t, o.api_key, rut, { hasta: 200, fechaAutorizacion: yesterday() });
    // 62 signed certification invoices of the organization
    for (let i = 0; i < 62; i++) {
      const folio = issuer.next;
      const xml = signed(issuer, invoice(issuer, '66666666-6', 1000 + i));
      const id = randomUUID();
      await t.db.dataSource.query(
        `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id, rut_emisor,
           rut_receptor, razon_social_receptor, fecha_emision, input, document, sii_status, idempotency_key, body_hash, signed_xml)
         VALUES ($1, $2, $3, 'cert', 33, $4, $5, $6, $7, '66666666-6', 'CLIENTE SPA', current_date, '{}', '{}', 'ACEPTADO', $8, 'h', $9)`,
        [id, o.organization_id, o.company_id, folio, caf.id, cert.id, rut, `k-${id}`, xml],
      );
    }
    const get = () =>
      fetch(`${t.url}/dtes/muestras`, { headers: { Authorization: `Bearer ${o.api_key}` } }).then(
        async (r) => ({
          status: r.status,
          total: r.headers.get('X-Muestras-Total'),
          body: Buffer.from(await r.arrayBuffer()),
        }),
      );
    // two at once for the same organization: one builds, the other is told to come back
    const [a, b] = await Promise.all([get(), get()]);
    const ok = [a, b].find((r) => r.status === 200)!;
    const busy = [a, b].find((r) => r.status !== 200)!;
    expect(ok, 'one answer is the ZIP').to.not.equal(undefined);
    expect(busy.status).to.equal(429);
    expect(JSON.parse(busy.body.toString()).code).to.equal('rate_limit');
    // the ZIP holds 60 PDFs (central directory entries) and says how many there are
    const entries = ok.body.toString('latin1').split('PK\x01\x02').length - 1;
    expect(entries).to.equal(60);
    expect(ok.total).to.equal('62');
    // once the first batch ended, the organization may build again
    expect((await get()).status).to.equal(200);
  });

  describe('proof of control before a RUT gets an owner', () => {
    const ORIGIN = { Origin: 'https://dashboard.test' };
    const signUp = async () => {
      const res = await call(t.url, 'POST', '/auth/signup', {
        json: { email: `u-${randomUUID()}@empresa.cl`, password: 'clave-segura-123' },
        headers: ORIGIN,
      });
      expect(res.status, res.text).to.equal(201);
      return /dte_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
    };
    const active = (rut: string) =>
      simAdmin(t, 'PUT', `/admin/contribuyentes/${rut}`, {
        estado: 'activo',
        razonSocial: 'EMPRESA REAL SPA',
      });
    const certificado = (signer: string, password = 'secreto') => ({
      p12_base64: testP12(signer, password).toString('base64'),
      password,
    });
    const orgs = async (rut: string) =>
      Number(
        (await t.db.dataSource.query(`SELECT count(*)::int AS n FROM organizations WHERE rut = $1`, [rut]))[0]
          .n,
      );

    it('a signed-up stranger cannot take an active RUT: no certificate, a wrong password, or a signer the SII does not authorize for it', async () => {
      const rut = newRut();
      await active(rut);
      await enrolAtSii(t, rut, { senders: [realSigner] });
      // the stranger's own certificate, enrolled at the SII for its own company only
      await enrolAtSii(t, newRut(), { senders: [stranger] });
      const cookie = await signUp();
      const post = (json: unknown) =>
        call<{ code: string; detail?: Record<string, unknown> }>(t.url, 'POST', '/organizations', {
          cookie,
          json,
          headers: ORIGIN,
        });

      let res = await post({ rut });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.text).to.contain('/certificado');
      res = await post({ rut, certificado: { ...certificado(realSigner), password: 'otra-clave' } });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('cert.invalid');
      res = await post({ rut, certificado: certificado(stranger) });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('cert_subject_mismatch');
      expect(res.body.detail).to.include({ motivo: 'firmante_no_autorizado', firmante: stranger });
      expect(await orgs(rut)).to.equal(0);

      // the real company, with the certificate of its authorized signer, onboards and owns it
      const owner = await signUp();
      const ok = await call<{ id: string }>(t.url, 'POST', '/organizations', {
        cookie: owner,
        json: { rut, certificado: certificado(realSigner) },
        headers: ORIGIN,
      });
      expect(ok.status, ok.text).to.equal(201);
      expect(await orgs(rut)).to.equal(1);
      const [audit] = await t.db.dataSource.query(
        `SELECT detail FROM audit_log WHERE organization_id = $1 AND action = 'organization.created'`,
        [ok.body.id],
      );
      expect(audit.detail.prueba_control).to.include({ firmante: realSigner });
    });
  });
});
