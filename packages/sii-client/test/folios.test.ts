/**
 * Folio grants (`requestFolios`): against a local fake server for what is sent and how every kind
 * of answer is classified, and against the SII simulator in-process for real grants — the CAF's
 * FRMA checked with openssl against the simulator's SII key, and a document stamped with the
 * granted CAF accepted by the simulator.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  stampAndSignDte,
  type DteDocument,
  type SigningCredential,
} from '@dte/engine';
import { startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';
import { expect } from 'chai';

import { SiiClient, SiiError, simulatorEndpoints } from '../src';
import { FakeSii, respuesta, rpcReply, type Scripted } from './support/fake-sii';

const CERT_NS = 'https://maullin.sii.cl/DTEWS';
const SEED_OK = respuesta('<ESTADO>00</ESTADO>', '<SEMILLA>000000000042</SEMILLA>');
const COMPANY = '76123456-0';
const SENDER = '11111111-1';
const today = () => new Date().toISOString().slice(0, 10);

async function expectSiiError(p: Promise<unknown>): Promise<SiiError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(SiiError);
    return err as SiiError;
  }
  throw new Error('expected a SiiError, the call succeeded');
}

const json = (status: number, error: string, message: string): Scripted => ({
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify({ error, message }),
});

describe('sii-client folio grants against a fake SII', function () {
  let fake: FakeSii;
  let credential: SigningCredential;
  const siiKey = createTestSiiKey(100);
  const cafXml = createTestCaf({
    siiKey,
    rutEmisor: COMPANY,
    razonSocial: 'COMPAÑÍA DE PRUEBA',
    tipoDte: 33,
    desde: 101,
    hasta: 150,
    fechaAutorizacion: today(),
    keyBits: 512,
  });

  before(() => {
    credential = readP12(createTestP12({ rut: SENDER, password: 'pw' }), 'pw');
  });
  beforeEach(async () => {
    fake = await new FakeSii().start();
  });
  afterEach(async () => {
    await fake.stop();
  });

  /** the fake serves one environment under /cert, like the simulator */
  const clientFor = () =>
    new SiiClient({
      endpoints: { cert: { baseUrl: `${fake.url}/cert`, registerUrl: `${fake.url}/cert/register` } },
      timeoutMs: 1000,
    });
  const ask = (client: SiiClient, extra: Partial<Parameters<SiiClient['requestFolios']>[0]> = {}) =>
    client.requestFolios({
      env: 'cert',
      token: 'TOKEN1',
      rutCompany: COMPANY,
      tipoDte: 33,
      cantidad: 50,
      ...extra,
    });
  const logins = (...tokens: string[]) =>
    fake.on('/cert/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', CERT_NS, SEED_OK) }).on(
      '/cert/DTEWS/GetTokenFromSeed.jws',
      ...tokens.map((t) => ({
        body: rpcReply('getToken', CERT_NS, respuesta('<ESTADO>00</ESTADO>', `<TOKEN>${t}</TOKEN>`)),
      })),
    );

  it('posts JSON {rutEmisor, tipoDte, cantidad} to {base}/folios with Cookie TOKEN and returns the CAF text unchanged', async () => {
    fake.on('/cert/folios', { contentType: 'application/xml', body: cafXml });
    const got = await ask(clientFor(), { rutCompany: '76.123.456-0' });
    expect(got).to.equal(cafXml);
    const [req, ...more] = fake.requestsTo('/cert/folios');
    expect(more).to.have.length(0);
    expect(req!.method).to.equal('POST');
    expect(req!.headers.cookie).to.equal('TOKEN=TOKEN1');
    expect(req!.headers['content-type']).to.match(/^application\/json/);
    expect(req!.headers['user-agent']).to.contain('compatible; PROG 1.0');
    expect(Number(req!.headers['content-length'])).to.equal(req!.body.length);
    expect(JSON.parse(req!.body.toString('utf8'))).to.deep.equal({
      rutEmisor: COMPANY,
      tipoDte: 33,
      cantidad: 50,
    });
  });

  it('reads a CAF sent as ISO-8859-1 bytes (as the SII writes CAF files)', async () => {
    const latin1 = cafXml.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>');
    fake.on('/cert/folios', { contentType: 'application/xml', body: Buffer.from(latin1, 'latin1') });
    const got = await ask(clientFor());
    expect(got).to.equal(latin1);
    expect(got).to.contain('<RS>COMPAÑÍA DE PRUEBA</RS>');
  });

  it('a session logs in, renews a token refused with 401 once, and asks again with the new one', async () => {
    logins('T1', 'T2');
    fake.on('/cert/folios', json(401, 'token_invalido', 'token expired'), {
      contentType: 'application/xml',
      body: cafXml,
    });
    const client = clientFor();
    const got = await client.session(credential).requestFolios({
      env: 'cert',
      rutCompany: COMPANY,
      tipoDte: 33,
      cantidad: 50,
    });
    expect(got).to.equal(cafXml);
    expect(fake.requestsTo('/cert/folios').map((r) => r.headers.cookie)).to.deep.equal([
      'TOKEN=T1',
      'TOKEN=T2',
    ]);
    expect(await client.getToken('cert', credential)).to.equal('T2');
  });

  it('401 twice ends after exactly one retry as a non-retryable auth error', async () => {
    logins('T1', 'T2');
    fake.on('/cert/folios', json(401, 'token_invalido', 'token unknown'));
    const err = await expectSiiError(
      clientFor()
        .session(credential)
        .requestFolios({ env: 'cert', rutCompany: COMPANY, tipoDte: 33, cantidad: 5 }),
    );
    expect([err.kind, err.retryable, err.httpStatus, err.siiCode, err.operation]).to.deep.equal([
      'auth',
      false,
      401,
      'token_invalido',
      'folios',
    ]);
    expect(fake.requestsTo('/cert/folios')).to.have.length(2);
  });

  it('a login refused with ESTADO -07 (holder not enrolled) throws that auth error and asks for nothing', async () => {
    fake
      .on('/cert/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', CERT_NS, SEED_OK) })
      .on('/cert/DTEWS/GetTokenFromSeed.jws', {
        body: rpcReply(
          'getToken',
          CERT_NS,
          respuesta('<ESTADO>-07</ESTADO><GLOSA>RUT no registrado</GLOSA>'),
        ),
      });
    const err = await expectSiiError(
      clientFor()
        .session(credential)
        .requestFolios({ env: 'cert', rutCompany: COMPANY, tipoDte: 33, cantidad: 5 }),
    );
    expect([err.kind, err.siiCode, err.operation]).to.deep.equal([
      'auth',
      '-07',
      'GetTokenFromSeed.getToken',
    ]);
    expect(fake.requestsTo('/cert/folios')).to.have.length(0);
  });

  it('403 is rejected (sin_permiso), 422 is rejected with the SII code and text; neither is retryable', async () => {
    fake.on(
      '/cert/folios',
      json(403, 'sin_permiso', '11111111-1 is not authorized for 76123456-0'),
      json(422, 'cantidad_invalida', 'cantidad must be 1..5'),
      { status: 403, contentType: 'text/plain', body: 'Forbidden' },
    );
    const client = clientFor();
    const e403 = await expectSiiError(ask(client));
    expect([e403.kind, e403.retryable, e403.httpStatus, e403.siiCode, e403.glosa]).to.deep.equal([
      'rejected',
      false,
      403,
      'sin_permiso',
      '11111111-1 is not authorized for 76123456-0',
    ]);
    const e422 = await expectSiiError(ask(client));
    expect([e422.kind, e422.retryable, e422.httpStatus, e422.siiCode, e422.glosa]).to.deep.equal([
      'rejected',
      false,
      422,
      'cantidad_invalida',
      'cantidad must be 1..5',
    ]);
    // a 403 without the JSON body still says what it means
    const bare = await expectSiiError(ask(client));
    expect([bare.kind, bare.httpStatus, bare.siiCode]).to.deep.equal(['rejected', 403, 'sin_permiso']);
  });

  it('5xx, 429, HTML pages and "Error 500" (even with HTTP 200) are transient and retryable', async () => {
    const answers: Scripted[] = [
      { status: 503, contentType: 'text/html', body: 'Error 503' },
      { status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'interno' }) },
      json(429, 'demasiadas', 'slow down'),
      { status: 200, contentType: 'text/html', body: '<html><body>Servicio no disponible</body></html>' },
      { status: 200, contentType: 'text/plain', body: 'Error 500' },
    ];
    fake.on('/cert/folios', ...answers, answers.at(-1)!);
    const client = clientFor();
    const seen: [string, boolean, number | undefined][] = [];
    for (let i = 0; i < answers.length; i++) {
      const e = await expectSiiError(ask(client));
      seen.push([e.kind, e.retryable, e.httpStatus]);
    }
    expect(seen).to.deep.equal([
      ['transient', true, 503],
      ['transient', true, 500],
      ['transient', true, 429],
      ['transient', true, 200],
      ['transient', true, 200],
    ]);
  });

  it('a 200 that is not a CAF, malformed XML or an unexpected status is a protocol error, never a grant', async () => {
    const answers: Scripted[] = [
      { status: 200, contentType: 'application/json', body: '{"ok":true}' },
      { status: 200, contentType: 'application/xml', body: '<AUTORIZACION><CAF>' },
      { status: 200, contentType: 'application/xml', body: '<RESPUESTA><ESTADO>0</ESTADO></RESPUESTA>' },
      {
        status: 200,
        contentType: 'application/xml',
        body: '<AUTORIZACION><RSASK>-----BEGIN RSA PRIVATE KEY-----secret</RSASK></AUTORIZACION>',
      },
      { status: 200, contentType: 'application/xml', body: '' },
      { status: 302, contentType: 'text/plain', body: 'moved' },
    ];
    fake.on('/cert/folios', ...answers, answers.at(-1)!);
    const client = clientFor();
    for (let i = 0; i < answers.length; i++) {
      const e = await expectSiiError(ask(client));
      expect([e.kind, e.retryable], `answer ${i}: ${e.message}`).to.deep.equal(['protocol', false]);
      expect(e.responseExcerpt ?? '').to.not.contain('secret');
    }
  });

  it('a dropped connection is transient; a timeout is transient and says the request had been sent', async () => {
    fake.on(
      '/cert/folios',
      { drop: true },
      { delayMs: 600, then: { contentType: 'application/xml', body: cafXml } },
    );
    const client = clientFor();
    const dropped = await expectSiiError(ask(client));
    expect(dropped.kind).to.equal('transient');
    const slow = await expectSiiError(ask(client, { timeoutMs: 150 }));
    expect([slow.kind, slow.requestSent]).to.deep.equal(['transient', true]);
    expect(slow.message).to.contain('timeout');
  });

  it('bad input, and the real SII (which has no folio web service), are refused before anything is sent', async () => {
    const client = clientFor();
    for (const bad of [
      { rutCompany: '76123456-1' },
      { tipoDte: 0 },
      { tipoDte: 33.5 },
      { cantidad: 0 },
      { cantidad: 2.5 },
      { token: 'a b' },
      { token: '' },
    ]) {
      let thrown: unknown;
      try {
        await ask(client, bad);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, JSON.stringify(bad)).to.be.instanceOf(RangeError);
    }
    expect(fake.requests).to.have.length(0);

    const real = await expectSiiError(ask(new SiiClient()));
    expect([real.kind, real.retryable, real.operation]).to.deep.equal(['protocol', false, 'folios']);
    expect(real.message).to.contain('nothing was sent');
  });
});

describe('sii-client folio grants against the SII simulator', function () {
  const RECEPTOR = '77777777-7';
  let sim: RunningSimulator;
  let client: SiiClient;
  let credential: SigningCredential;
  let tmp: string;

  const session = () => client.session(credential);
  const ask = (rutCompany: string, tipoDte: number, cantidad: number) =>
    session().requestFolios({ env: 'cert', rutCompany, tipoDte, cantidad });

  /** FRMA over the flattened DA as ISO-8859-1 bytes, checked by openssl with the simulator's SII key */
  function opensslVerifiesFrma(xml: string): boolean {
    const da = /<DA>[\s\S]*<\/DA>/.exec(xml)![0].replace(/>\s+</g, '><');
    const frma = /<FRMA[^>]*>([^<]+)<\/FRMA>/.exec(xml)![1]!;
    writeFileSync(path.join(tmp, 'da'), Buffer.from(da, 'latin1'));
    writeFileSync(path.join(tmp, 'sig'), Buffer.from(frma, 'base64'));
    writeFileSync(path.join(tmp, 'pub.pem'), sim.siiKeys.cert.publicKeyPem);
    try {
      execFileSync('openssl', ['dgst', '-sha1', '-verify', 'pub.pem', '-signature', 'sig', 'da'], {
        cwd: tmp,
        stdio: 'pipe',
      });
      return true;
    } catch {
      return false;
    }
  }

  before(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'sii-folios-'));
    sim = await startSiiSimulator({
      port: 0,
      autoEnrol: false,
      timings: { registerMs: 100, stepMs: 20 },
      cafKeyBits: 512,
    });
    const enrol = await fetch(`${sim.url}/admin/cert/companies/${COMPANY}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        razonSocial: 'EMPRESA DE PRUEBA SPA',
        senders: [SENDER],
        fchResol: '2024-03-01',
        nroResol: 0,
      }),
    });
    expect(enrol.status).to.equal(200);
    client = new SiiClient({
      endpoints: simulatorEndpoints(sim.url),
      timeoutMs: 5000,
      uploadTimeoutMs: 10000,
    });
    credential = readP12(createTestP12({ rut: SENDER, password: 'pw' }), 'pw');
  });
  after(async () => {
    await sim?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(() => sim.state.triggers.clear());

  it('grants consecutive ranges per type; the CAF verifies with openssl and stamps a document the SII accepts', async () => {
    const first = parseCaf(await ask(COMPANY, 33, 3));
    const second = await ask(COMPANY, 33, 2);
    const other = parseCaf(await ask(COMPANY, 61, 1));
    expect([first.rutEmisor, first.tipoDte, first.desde, first.hasta]).to.deep.equal([COMPANY, 33, 1, 3]);
    expect([parseCaf(second).desde, parseCaf(second).hasta]).to.deep.equal([4, 5]);
    expect([other.tipoDte, other.desde, other.hasta]).to.deep.equal([61, 1, 1]);
    expect(first.idk).to.equal(100);
    expect(opensslVerifiesFrma(second)).to.equal(true);
    expect(opensslVerifiesFrma(second.replace('<H>5</H>', '<H>6</H>'))).to.equal(false);

    const doc: DteDocument = {
      Encabezado: {
        IdDoc: { TipoDTE: 33, Folio: 2, FchEmis: today() },
        Emisor: {
          RUTEmisor: COMPANY,
          RznSoc: 'EMPRESA DE PRUEBA SPA',
          GiroEmis: 'Servicios informaticos',
          Acteco: [620200],
          DirOrigen: 'Av. Siempre Viva 123',
          CmnaOrigen: 'Santiago',
        },
        Receptor: {
          RUTRecep: RECEPTOR,
          RznSocRecep: 'CLIENTE LTDA',
          GiroRecep: 'Comercio',
          DirRecep: 'Calle Uno 1',
          CmnaRecep: 'Providencia',
        },
        Totales: { MntNeto: 1000, TasaIVA: 19, IVA: 190, MntTotal: 1190 },
      },
      Detalle: [{ NroLinDet: 1, NmbItem: 'Servicio', QtyItem: 1, PrcItem: 1000, MontoItem: 1000 }],
    };
    const now = new Date();
    const xml = buildEnvioDte([stampAndSignDte(doc, { caf: first, credential, timestamp: now })], {
      rutEmisor: COMPANY,
      rutEnvia: SENDER,
      fchResol: '2024-03-01',
      nroResol: 0,
      credential,
      timestamp: now,
    });
    const up = await session().uploadEnvio({ env: 'cert', rutCompany: COMPANY, xml });
    if (up.kind !== 'accepted') throw new Error(`upload not accepted: ${up.kind}`);
    let estado = '';
    let counts: unknown;
    for (let i = 0; i < 100 && !['EPR', 'RSC', 'RFR', 'RCT'].includes(estado); i++) {
      await new Promise((r) => setTimeout(r, 30));
      const s = await session().queryUploadStatus({ env: 'cert', rutCompany: COMPANY, trackId: up.trackId });
      ({ estado, counts } = s);
    }
    expect(estado).to.equal('EPR');
    expect(counts).to.deep.equal([{ tipoDte: 33, informados: 1, aceptados: 1, rechazados: 0, reparos: 0 }]);
  });

  it('another issuer is rejected 403 sin_permiso; a quantity above the limit is rejected 422', async () => {
    const e403 = await expectSiiError(ask('77777777-7', 33, 5));
    expect([e403.kind, e403.httpStatus, e403.siiCode]).to.deep.equal(['rejected', 403, 'sin_permiso']);
    const max = sim.options.maxFoliosPerCaf;
    const e422 = await expectSiiError(ask(COMPANY, 33, max + 1));
    expect([e422.kind, e422.httpStatus, e422.siiCode]).to.deep.equal(['rejected', 422, 'cantidad_invalida']);
  });

  it('a certificate whose holder is enrolled nowhere fails at login (auth, ESTADO -07)', async () => {
    const stranger = readP12(createTestP12({ rut: '22222222-2', password: 'pw' }), 'pw');
    const err = await expectSiiError(
      client.session(stranger).requestFolios({ env: 'cert', rutCompany: COMPANY, tipoDte: 33, cantidad: 1 }),
    );
    expect([err.kind, err.siiCode]).to.deep.equal(['auth', '-07']);
  });

  it('HTTP 503 and a dropped connection are transient; an expired token is renewed once and the grant goes through', async () => {
    await client.getToken('cert', credential);
    sim.state.triggers.add({ kind: 'http-error', operation: 'folios', status: 503 });
    const e503 = await expectSiiError(ask(COMPANY, 34, 1));
    expect([e503.kind, e503.retryable, e503.httpStatus]).to.deep.equal(['transient', true, 503]);
    sim.state.triggers.add({ kind: 'drop', operation: 'folios' });
    expect((await expectSiiError(ask(COMPANY, 34, 1))).kind).to.equal('transient');

    const before = await client.getToken('cert', credential);
    const offset = sim.state.clockOffsetMs;
    sim.state.clockOffsetMs += sim.options.tokenTtlMs + 60_000;
    try {
      const caf = parseCaf(await ask(COMPANY, 34, 1), {
        now: new Date(Date.now() + sim.state.clockOffsetMs),
      });
      expect(caf.tipoDte).to.equal(34);
      expect(await client.getToken('cert', credential)).to.not.equal(before);
    } finally {
      sim.state.clockOffsetMs = offset;
    }
  });
});
