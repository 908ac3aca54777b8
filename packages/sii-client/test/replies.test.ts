/**
 * The client against tiny local servers that answer with recorded-shape SII replies: what it
 * sends (paths, SOAP bodies, multipart form, headers) and how it reads good, malformed, HTML,
 * "Error 500", slow and dropped answers.
 */
import { createTestP12, readP12, verifySeedDocument, type SigningCredential } from '@dte/engine';
import { DOMParser, type Element } from '@xmldom/xmldom';
import busboy from 'busboy';
import { expect } from 'chai';

import { InMemoryTokenCache, SiiClient, SiiError, type UploadOutcome } from '../src';
import {
  FakeSii,
  recepcion,
  registerReply,
  respuesta,
  rpcReply,
  soapFault,
  type Recorded,
} from './support/fake-sii';

const CERT_NS = 'https://maullin.sii.cl/DTEWS';
const REGISTER_PATH = '/WSREGISTRORECLAMODTECERT/registroreclamodteservice';
const SEED_OK = respuesta('<ESTADO>00</ESTADO>', '<SEMILLA>000000000078</SEMILLA>');

function clientFor(fake: FakeSii, extra: ConstructorParameters<typeof SiiClient>[0] = {}): SiiClient {
  return new SiiClient({
    endpoints: { cert: { baseUrl: fake.url, registerUrl: fake.url + REGISTER_PATH } },
    timeoutMs: 2000,
    uploadTimeoutMs: 2000,
    ...extra,
  });
}

/** the SOAP Body's method element of a recorded request */
function soapCall(r: Recorded): { ns: string; method: string; params: [string, string][] } {
  const doc = new DOMParser().parseFromString(r.body.toString('utf8'), 'text/xml');
  const body = doc.getElementsByTagNameNS('http://schemas.xmlsoap.org/soap/envelope/', 'Body')[0]!;
  let call = body.firstChild;
  while (call && call.nodeType !== 1) call = call.nextSibling;
  const el = call as Element;
  const params: [string, string][] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 1) params.push([(c as Element).localName ?? '', c.textContent ?? '']);
  }
  return { ns: el.namespaceURI ?? '', method: el.localName ?? '', params };
}

async function expectSiiError(p: Promise<unknown>): Promise<SiiError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(SiiError);
    return err as SiiError;
  }
  throw new Error('expected a SiiError, the call succeeded');
}

/** multipart parsed by busboy (an independent reader): fields in order and the file part */
function readForm(r: Recorded): Promise<{
  order: string[];
  fields: Record<string, string>;
  file?: { name: string; type: string; data: Buffer };
}> {
  return new Promise((resolve, reject) => {
    const bb = busboy({ headers: r.headers });
    const out: Awaited<ReturnType<typeof readForm>> = { order: [], fields: {} };
    bb.on('field', (name, value) => {
      out.order.push(name);
      out.fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      out.order.push(name);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        out.file = { name: info.filename ?? '', type: info.mimeType, data: Buffer.concat(chunks) };
      });
    });
    bb.on('error', reject);
    bb.on('close', () => resolve(out));
    bb.end(r.body);
  });
}

describe('sii-client against recorded SII replies', function () {
  let fake: FakeSii;
  let credential: SigningCredential;

  before(function () {
    credential = readP12(createTestP12({ rut: '12345678-5', password: 'pw' }), 'pw');
  });
  beforeEach(async () => {
    fake = await new FakeSii().start();
  });
  afterEach(async () => {
    await fake.stop();
  });

  describe('CrSeed.getSeed', () => {
    it('sends the manual RPC envelope and keeps the seed as text with its leading zeros', async () => {
      fake.on('/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', `${CERT_NS}/CrSeed.jws`, SEED_OK) });
      const seed = await clientFor(fake).getSeed('cert');
      expect(seed).to.equal('000000000078');
      const [req] = fake.requests;
      expect(req!.method).to.equal('POST');
      expect(req!.headers.soapaction).to.equal('""');
      expect(req!.headers['content-type']).to.match(/^text\/xml/);
      expect(req!.headers['user-agent']).to.contain('compatible; PROG 1.0');
      expect(Number(req!.headers['content-length'])).to.equal(req!.body.length);
      expect(soapCall(req!)).to.deep.equal({ ns: `${CERT_NS}/CrSeed.jws`, method: 'getSeed', params: [] });
    });

    it('reads RESP_BODY before RESP_HDR too, and uses the production namespace for prod', async () => {
      const client = new SiiClient({ endpoints: { prod: { baseUrl: fake.url } }, timeoutMs: 2000 });
      const body = respuesta('<ESTADO>00</ESTADO>', '<SEMILLA>1234</SEMILLA>');
      fake.on('/DTEWS/CrSeed.jws', {
        body: rpcReply('getSeed', 'https://palena.sii.cl/DTEWS/CrSeed.jws', body),
      });
      expect(await client.getSeed('prod')).to.equal('1234');
      expect(soapCall(fake.requests[0]!).ns).to.equal('https://palena.sii.cl/DTEWS/CrSeed.jws');
    });

    it('ESTADO -2 is a transient error with the SII code; a missing ESTADO is never read as OK', async () => {
      fake.on(
        '/DTEWS/CrSeed.jws',
        { body: rpcReply('getSeed', CERT_NS, respuesta('<ESTADO>-2</ESTADO><GLOSA>ERROR RETORNO</GLOSA>')) },
        { body: rpcReply('getSeed', CERT_NS, respuesta('', '<SEMILLA>55</SEMILLA>')) },
      );
      const client = clientFor(fake);
      const e1 = await expectSiiError(client.getSeed('cert'));
      expect([e1.kind, e1.retryable, e1.siiCode]).to.deep.equal(['transient', true, '-2']);
      const e2 = await expectSiiError(client.getSeed('cert'));
      expect([e2.kind, e2.retryable]).to.deep.equal(['protocol', false]);
    });
  });

  describe('tokens', () => {
    it('signs the seed with the engine, sends it escaped in pszXml, caches the token', async () => {
      fake
        .on('/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', CERT_NS, SEED_OK) })
        .on('/DTEWS/GetTokenFromSeed.jws', {
          body: rpcReply(
            'getToken',
            CERT_NS,
            respuesta('<ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA>', '<TOKEN>XAuSbYXiNh9Ik</TOKEN>'),
          ),
        });
      const client = clientFor(fake);
      const [a, b] = await Promise.all([
        client.getToken('cert', credential),
        client.getToken('cert', credential),
      ]);
      expect(a).to.equal('XAuSbYXiNh9Ik');
      expect(b).to.equal(a);
      expect(await client.getToken('cert', credential)).to.equal(a);
      // one login for three callers
      expect(fake.requestsTo('/DTEWS/CrSeed.jws')).to.have.length(1);
      const tokenReqs = fake.requestsTo('/DTEWS/GetTokenFromSeed.jws');
      expect(tokenReqs).to.have.length(1);
      const call = soapCall(tokenReqs[0]!);
      expect(call.method).to.equal('getToken');
      expect(call.params.map(([n]) => n)).to.deep.equal(['pszXml']);
      // the raw body carries the signed XML escaped, and it verifies as the SII would check it
      expect(tokenReqs[0]!.body.toString()).to.contain('&lt;getToken&gt;');
      const check = verifySeedDocument(call.params[0]![1]);
      expect(check.valid, check.error).to.equal(true);
      expect(check.seed).to.equal('000000000078');
    });

    it('ESTADO 05 (invalid signature) is a non-retryable auth error; 08 (stale seed) is transient', async () => {
      fake.on('/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', CERT_NS, SEED_OK) }).on(
        '/DTEWS/GetTokenFromSeed.jws',
        {
          body: rpcReply(
            'getToken',
            CERT_NS,
            respuesta('<ESTADO>05</ESTADO><GLOSA>Firma no es valida</GLOSA>'),
          ),
        },
        {
          body: rpcReply(
            'getToken',
            CERT_NS,
            respuesta('<ESTADO>08</ESTADO><GLOSA>TIME-OUT DEL SEED</GLOSA>'),
          ),
        },
      );
      const client = clientFor(fake);
      const e1 = await expectSiiError(client.getToken('cert', credential));
      expect([e1.kind, e1.retryable, e1.siiCode, e1.glosa]).to.deep.equal([
        'auth',
        false,
        '05',
        'Firma no es valida',
      ]);
      const e2 = await expectSiiError(client.getToken('cert', credential));
      expect([e2.kind, e2.retryable, e2.siiCode]).to.deep.equal(['transient', true, '08']);
    });

    it('InMemoryTokenCache forgets a token after its TTL, and delete(key, token) spares a newer token', async () => {
      let now = 1_000_000;
      const cache = new InMemoryTokenCache(() => now);
      await cache.set('k', 'T1', 300);
      now += 299_000;
      expect(await cache.get('k')).to.equal('T1');
      now += 1_000;
      expect(await cache.get('k')).to.equal(undefined);
      await cache.set('k', 'T2', 300);
      await cache.delete('k', 'T1');
      expect(await cache.get('k')).to.equal('T2');
      await cache.delete('k');
      expect(await cache.get('k')).to.equal(undefined);
    });

    it('withToken: a token refused by QueryEstUp (002) is dropped and the call retried once with a new token', async () => {
      let n = 0;
      const tokenReply = () =>
        rpcReply('getToken', CERT_NS, respuesta('<ESTADO>00</ESTADO>', `<TOKEN>TOK${++n}</TOKEN>`));
      fake
        .on('/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', CERT_NS, SEED_OK) })
        .on('/DTEWS/GetTokenFromSeed.jws', { body: tokenReply() }, { body: tokenReply() })
        .on(
          '/DTEWS/QueryEstUp.jws',
          {
            body: rpcReply(
              'getEstUp',
              CERT_NS,
              respuesta('<ESTADO>002</ESTADO><GLOSA>TOKEN INACTIVO</GLOSA>'),
            ),
          },
          { body: rpcReply('getEstUp', CERT_NS, respuesta('<TRACKID>42</TRACKID><ESTADO>SOK</ESTADO>')) },
        );
      const cache = new InMemoryTokenCache();
      const client = clientFor(fake, { tokenCache: cache });
      const used: string[] = [];
      const status = await client.withToken('cert', credential, (token) => {
        used.push(token);
        return client.queryUploadStatus({ env: 'cert', token, rutCompany: '76543210-3', trackId: '42' });
      });
      expect(status.estado).to.equal('SOK');
      expect(used).to.deep.equal(['TOK1', 'TOK2']);
      expect(await client.getToken('cert', credential)).to.equal('TOK2');
      const sentTokens = fake.requestsTo('/DTEWS/QueryEstUp.jws').map((r) => soapCall(r).params[3]![1]);
      expect(sentTokens).to.deep.equal(['TOK1', 'TOK2']);
    });

    it('sendEnvio: STATUS 5 twice ends after exactly one retry with the auth outcome', async () => {
      let n = 0;
      fake
        .on('/DTEWS/CrSeed.jws', { body: rpcReply('getSeed', CERT_NS, SEED_OK) })
        .on(
          '/DTEWS/GetTokenFromSeed.jws',
          { body: rpcReply('getToken', CERT_NS, respuesta('<ESTADO>00</ESTADO>', `<TOKEN>T${++n}</TOKEN>`)) },
          { body: rpcReply('getToken', CERT_NS, respuesta('<ESTADO>00</ESTADO>', `<TOKEN>T${++n}</TOKEN>`)) },
        )
        .on('/cgi_dte/UPL/DTEUpload', { body: recepcion('<STATUS>5</STATUS>') });
      const outcome = await clientFor(fake).sendEnvio({
        env: 'cert',
        credential,
        rutCompany: '76543210-3',
        xml: Buffer.from('<EnvioDTE/>'),
      });
      expect(outcome.kind).to.equal('auth');
      const uploads = fake.requestsTo('/cgi_dte/UPL/DTEUpload');
      expect(uploads.map((r) => r.headers.cookie)).to.deep.equal(['TOKEN=T1', 'TOKEN=T2']);
      expect(fake.requestsTo('/DTEWS/GetTokenFromSeed.jws')).to.have.length(2);
    });
    it('sendEnvio: a failed login throws its transient SiiError and uploads nothing', async () => {
      fake.on('/DTEWS/CrSeed.jws', {
        status: 503,
        contentType: 'text/html',
        body: '<html><body>Mantencion</body></html>',
      });
      const err = await expectSiiError(
        clientFor(fake).sendEnvio({
          env: 'cert',
          credential,
          rutCompany: '76543210-3',
          xml: Buffer.from('<EnvioDTE/>'),
        }),
      );
      expect([err.kind, err.retryable, err.httpStatus, err.operation]).to.deep.equal([
        'transient',
        true,
        503,
        'CrSeed.getSeed',
      ]);
      expect(fake.requestsTo('/cgi_dte/UPL/DTEUpload')).to.have.length(0);
    });
  });

  describe('DTEUpload', () => {
    const xml = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE>', 'latin1'),
      Buffer.from('Compañía & Cía', 'latin1'),
      Buffer.from('</EnvioDTE>', 'latin1'),
    ]);
    const upload = (client: SiiClient, extra: Partial<Parameters<SiiClient['uploadEnvio']>[0]> = {}) =>
      client.uploadEnvio({
        env: 'cert',
        token: 'TOKEN123',
        rutSender: '12.345.678-5',
        rutCompany: '76543210-3',
        xml,
        filename: 'envio-1.xml',
        ...extra,
      });

    it('posts the five form fields in order with the file bytes unchanged, Cookie TOKEN, the UA quirk and an exact Content-Length', async () => {
      fake.on('/cgi_dte/UPL/DTEUpload', {
        body: recepcion(
          '<RUTSENDER>12345678-5</RUTSENDER><RUTCOMPANY>76543210-3</RUTCOMPANY><FILE>envio-1.xml</FILE>' +
            '<TIMESTAMP>2026-09-23 16:29:53</TIMESTAMP><STATUS>0</STATUS><TRACKID>0260003916</TRACKID>',
        ),
      });
      const out = await upload(clientFor(fake));
      expect(out.kind).to.equal('accepted');
      expect(out.kind === 'accepted' && out.trackId).to.equal('0260003916');
      expect(out.kind === 'accepted' && out.receipt.timestamp).to.equal('2026-09-23 16:29:53');

      const [req] = fake.requests;
      expect(req!.headers.cookie).to.equal('TOKEN=TOKEN123');
      expect(req!.headers['user-agent']).to.match(/^Mozilla\/4\.0 \(compatible; PROG 1\.0;/);
      expect(req!.rawHeaderNames).to.include('Content-Length');
      expect(req!.headers['transfer-encoding']).to.equal(undefined);
      expect(Number(req!.headers['content-length'])).to.equal(req!.body.length);
      const form = await readForm(req!);
      expect(form.order).to.deep.equal(['rutSender', 'dvSender', 'rutCompany', 'dvCompany', 'archivo']);
      expect(form.fields).to.deep.equal({
        rutSender: '12345678',
        dvSender: '5',
        rutCompany: '76543210',
        dvCompany: '3',
      });
      expect(form.file!.name).to.equal('envio-1.xml');
      expect(form.file!.type).to.equal('text/xml');
      expect(form.file!.data.equals(xml)).to.equal(true);
    });

    it('a RECEPCIONDTE without STATUS is a protocol outcome, never an accepted upload', async () => {
      fake.on('/cgi_dte/UPL/DTEUpload', { body: recepcion('<TRACKID>123</TRACKID>') });
      const out = await upload(clientFor(fake));
      expect(out.kind).to.equal('protocol');
      expect(out.kind === 'protocol' && out.error.retryable).to.equal(false);
    });

    it('STATUS 0 without TRACKID is not accepted either', async () => {
      fake.on('/cgi_dte/UPL/DTEUpload', { body: recepcion('<STATUS>0</STATUS>') });
      expect((await upload(clientFor(fake))).kind).to.equal('protocol');
    });

    const cases: [string, string, Partial<Record<string, unknown>>][] = [
      ['1', 'no_permission', { errorKind: 'rejected', retryable: false }],
      ['6', 'no_permission', { errorKind: 'rejected', retryable: false }],
      ['5', 'auth', { errorKind: 'auth' }],
      ['2', 'size', { errorKind: 'rejected' }],
      ['3', 'size', { errorKind: 'rejected' }],
      ['9', 'transient', { errorKind: 'transient', retryable: true }],
      ['4', 'transient', { errorKind: 'transient', retryable: true }],
      ['99', 'repeated', { errorKind: 'rejected', retryable: false }],
    ];
    for (const [status, kind, want] of cases) {
      it(`STATUS ${status} → ${kind}`, async () => {
        fake.on('/cgi_dte/UPL/DTEUpload', { body: recepcion(`<STATUS>${status}</STATUS>`) });
        const out = await upload(clientFor(fake));
        expect(out.kind).to.equal(kind);
        const err = (out as Exclude<UploadOutcome, { kind: 'accepted' }>).error;
        expect(err.kind).to.equal(want.errorKind);
        expect(err.siiCode).to.equal(status);
        if (want.retryable !== undefined) expect(err.retryable).to.equal(want.retryable);
      });
    }

    it('STATUS 7 and 8 carry the DETAIL/ERROR lines and say schema or signature', async () => {
      fake.on(
        '/cgi_dte/UPL/DTEUpload',
        {
          body: recepcion(
            '<STATUS>7</STATUS><DETAIL><ERROR>Element Folio: invalid value</ERROR><ERROR>line 12</ERROR></DETAIL>',
          ),
        },
        { body: recepcion('<STATUS>8</STATUS>') },
      );
      const client = clientFor(fake);
      const a = await upload(client);
      expect(a.kind === 'invalid' && [a.reason, a.errors]).to.deep.equal([
        'schema',
        ['Element Folio: invalid value', 'line 12'],
      ]);
      const b = await upload(client);
      expect(b.kind === 'invalid' && b.reason).to.equal('signature');
    });

    it('HTML pages and "Error 500" (with HTTP 200 or 500) are transient and retryable', async () => {
      fake.on(
        '/cgi_dte/UPL/DTEUpload',
        {
          status: 200,
          contentType: 'text/html',
          body: '<HTML><HEAD><TITLE>Error</TITLE></HEAD><BODY>Servicio no disponible</BODY></HTML>',
        },
        { status: 500, contentType: 'text/html', body: 'Error 500' },
        { status: 200, contentType: 'text/plain', body: 'Error 500\n' },
        { status: 503, contentType: 'text/plain', body: '' },
      );
      const client = clientFor(fake);
      for (let i = 0; i < 4; i++) {
        const out = await upload(client);
        expect(out.kind, `answer ${i}`).to.equal('transient');
        expect((out as { error: SiiError }).error.retryable).to.equal(true);
      }
    });

    it('reads ISO-8859-1 bytes in a reply that declares UTF-8 (the SII does that)', async () => {
      const body = Buffer.concat([
        Buffer.from(
          recepcion('<STATUS>7</STATUS><DETAIL><ERROR>')
            .trimEnd()
            .replace(/<\/RECEPCIONDTE>$/, ''),
          'utf8',
        ),
        Buffer.from('Tamaño inválido</ERROR></DETAIL></RECEPCIONDTE>', 'latin1'),
      ]);
      fake.on('/cgi_dte/UPL/DTEUpload', { body });
      const out = await upload(clientFor(fake));
      expect(out.kind === 'invalid' && out.errors).to.deep.equal(['Tamaño inválido']);
    });

    it('malformed XML with HTTP 200 is a protocol outcome', async () => {
      fake.on('/cgi_dte/UPL/DTEUpload', { body: '<RECEPCIONDTE><STATUS>0</STATUS><TRACKID>1' });
      expect((await upload(clientFor(fake))).kind).to.equal('protocol');
    });

    it('a slow answer hits the deadline: transient, and it says the envelope was completely sent', async () => {
      fake.on('/cgi_dte/UPL/DTEUpload', {
        delayMs: 1500,
        then: { body: recepcion('<STATUS>0</STATUS><TRACKID>1</TRACKID>') },
      });
      const started = Date.now();
      const out = await upload(clientFor(fake), { timeoutMs: 200 });
      expect(Date.now() - started).to.be.lessThan(1400);
      expect(out.kind).to.equal('transient');
      const err = (out as { error: SiiError }).error;
      expect(err.message).to.contain('timeout');
      expect(err.requestSent).to.equal(true);
    });

    it('a dropped connection and a reply cut in the middle are transient', async () => {
      fake.on(
        '/cgi_dte/UPL/DTEUpload',
        { drop: true },
        { partial: '<?xml version="1.0"?><RECEPCIONDTE><STATUS>0</STA' },
      );
      const client = clientFor(fake);
      const a = await upload(client);
      expect(a.kind).to.equal('transient');
      const b = await upload(client);
      expect(b.kind).to.equal('transient');
    });

    it('the caller can abort; an unreachable host is transient', async () => {
      fake.on('/cgi_dte/UPL/DTEUpload', {
        delayMs: 1000,
        then: { body: recepcion('<STATUS>0</STATUS><TRACKID>1</TRACKID>') },
      });
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      const out = await upload(clientFor(fake), { signal: ac.signal });
      expect(out.kind === 'transient' && out.error.message).to.contain('aborted');

      const closed = new SiiClient({
        endpoints: { cert: { baseUrl: 'http://127.0.0.1:1' } },
        timeoutMs: 1000,
      });
      const down = await upload(closed);
      expect(down.kind === 'transient' && down.error.requestSent).to.equal(false);
    });

    it('bad input is refused before anything is sent', async () => {
      const client = clientFor(fake);
      for (const bad of [
        { rutCompany: '76543210-4' },
        { rutSender: 'x' },
        { xml: Buffer.alloc(0) },
        { token: 'a b' },
      ]) {
        let thrown: unknown;
        try {
          await upload(client, bad as Partial<Parameters<SiiClient['uploadEnvio']>[0]>);
        } catch (err) {
          thrown = err;
        }
        expect(thrown, JSON.stringify(bad)).to.be.instanceOf(RangeError);
      }
      expect(fake.requests).to.have.length(0);
    });
  });

  describe('QueryEstUp and QueryEstDte', () => {
    it('sends the WSDL parameters in order and reads an EPR with per-type counts (body before header)', async () => {
      const body =
        '<TIPO_DOCTO>33</TIPO_DOCTO><INFORMADOS>22</INFORMADOS><ACEPTADOS>22</ACEPTADOS><RECHAZADOS>0</RECHAZADOS><REPAROS>0</REPAROS>' +
        '<TIPO_DOCTO>61</TIPO_DOCTO><INFORMADOS>6</INFORMADOS><ACEPTADOS>3</ACEPTADOS><RECHAZADOS>3</RECHAZADOS><REPAROS>1</REPAROS>';
      const hdr =
        '<TRACKID>0253081988</TRACKID><ESTADO>EPR</ESTADO><GLOSA>Envio Procesado</GLOSA>' +
        '<NUM_ATENCION>370027 ( 2026/08/04 14:20:53)</NUM_ATENCION>';
      fake.on('/DTEWS/QueryEstUp.jws', {
        body: rpcReply('getEstUp', `${CERT_NS}/QueryEstUp.jws`, respuesta(hdr, body)),
      });
      const s = await clientFor(fake).queryUploadStatus({
        env: 'cert',
        token: 'TK',
        rutCompany: '76.543.210-3',
        trackId: '0253081988',
      });
      expect(s.estado).to.equal('EPR');
      expect(s.glosa).to.equal('Envio Procesado');
      expect(s.numAtencion).to.equal('370027 ( 2026/08/04 14:20:53)');
      expect(s.trackId).to.equal('0253081988');
      expect(s.problem).to.equal(undefined);
      expect(s.counts).to.deep.equal([
        { tipoDte: 33, informados: 22, aceptados: 22, rechazados: 0, reparos: 0 },
        { tipoDte: 61, informados: 6, aceptados: 3, rechazados: 3, reparos: 1 },
      ]);
      expect(s.totals).to.deep.equal({ informados: 28, aceptados: 25, rechazados: 3, reparos: 1 });
      expect(soapCall(fake.requests[0]!)).to.deep.equal({
        ns: `${CERT_NS}/QueryEstUp.jws`,
        method: 'getEstUp',
        params: [
          ['RutCompania', '76543210'],
          ['DvCompania', '3'],
          ['TrackId', '0253081988'],
          ['Token', 'TK'],
        ],
      });
    });

    it('-11 comes back as pending with ERR_CODE/SQL_CODE/SRV_CODE; -6 as no_permission; 001 throws auth', async () => {
      fake.on(
        '/DTEWS/QueryEstUp.jws',
        {
          body: rpcReply(
            'getEstUp',
            CERT_NS,
            respuesta(
              '<ESTADO>-11</ESTADO><ERR_CODE>1</ERR_CODE><SQL_CODE>0</SQL_CODE><SRV_CODE>0</SRV_CODE>',
            ),
          ),
        },
        {
          body: rpcReply(
            'getEstUp',
            CERT_NS,
            respuesta('<ESTADO>-6</ESTADO><GLOSA>Usuario no Autorizado</GLOSA>'),
          ),
        },
        { body: rpcReply('getEstUp', CERT_NS, respuesta('<ESTADO>001</ESTADO>')) },
      );
      const client = clientFor(fake);
      const q = { env: 'cert' as const, token: 'TK', rutCompany: '76543210-3', trackId: '7' };
      const a = await client.queryUploadStatus(q);
      expect([a.estado, a.problem, a.errCode, a.sqlCode, a.srvCode]).to.deep.equal([
        '-11',
        'pending',
        '1',
        '0',
        '0',
      ]);
      const b = await client.queryUploadStatus(q);
      expect([b.estado, b.problem]).to.deep.equal(['-6', 'no_permission']);
      const c = await expectSiiError(client.queryUploadStatus(q));
      expect([c.kind, c.siiCode]).to.deep.equal(['auth', '001']);
    });

    it('a count that is not a number, or a reply with no return, is a protocol error', async () => {
      fake.on(
        '/DTEWS/QueryEstUp.jws',
        {
          body: rpcReply(
            'getEstUp',
            CERT_NS,
            respuesta('<ESTADO>EPR</ESTADO>', '<TIPO_DOCTO>33</TIPO_DOCTO><ACEPTADOS>x</ACEPTADOS>'),
          ),
        },
        {
          body: '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body/></soapenv:Envelope>',
        },
      );
      const client = clientFor(fake);
      const q = { env: 'cert' as const, token: 'TK', rutCompany: '76543210-3', trackId: '7' };
      expect((await expectSiiError(client.queryUploadStatus(q))).kind).to.equal('protocol');
      expect((await expectSiiError(client.queryUploadStatus(q))).kind).to.equal('protocol');
    });

    it('QueryEstDte sends FechaEmisionDte as DDMMAAAA and reads ESTADO, GLOSA_ESTADO, ERR_CODE, GLOSA_ERR', async () => {
      fake.on('/DTEWS/QueryEstDte.jws', {
        body: rpcReply(
          'getEstDte',
          `${CERT_NS}/QueryEstDte.jws`,
          respuesta(
            '<ESTADO>DOK</ESTADO><GLOSA_ESTADO>Documento Recibido por el SII. Datos Coinciden con los Registrados</GLOSA_ESTADO>' +
              '<ERR_CODE>0</ERR_CODE><GLOSA_ERR>Documento Recibido</GLOSA_ERR><NUM_ATENCION>1234</NUM_ATENCION>',
          ),
        ),
      });
      const s = await clientFor(fake).queryDocumentStatus({
        env: 'cert',
        token: 'TK',
        rutConsultante: '12345678-5',
        rutCompany: '76543210-3',
        rutReceptor: '60803000-K',
        tipoDte: 33,
        folio: 17,
        fechaEmision: '2026-11-02',
        montoTotal: 119000,
      });
      expect([s.estado, s.errCode, s.glosaErr, s.numAtencion]).to.deep.equal([
        'DOK',
        '0',
        'Documento Recibido',
        '1234',
      ]);
      expect(soapCall(fake.requests[0]!).params).to.deep.equal([
        ['RutConsultante', '12345678'],
        ['DvConsultante', '5'],
        ['RutCompania', '76543210'],
        ['DvCompania', '3'],
        ['RutReceptor', '60803000'],
        ['DvReceptor', 'K'],
        ['TipoDte', '33'],
        ['FolioDte', '17'],
        ['FechaEmisionDte', '02112026'],
        ['MontoDte', '119000'],
        ['Token', 'TK'],
      ]);
    });

    it('an impossible date is refused before sending; a token error 003 throws auth', async () => {
      fake.on('/DTEWS/QueryEstDte.jws', {
        body: rpcReply('getEstDte', CERT_NS, respuesta('<ESTADO>003</ESTADO>')),
      });
      const client = clientFor(fake);
      const q = {
        env: 'cert' as const,
        token: 'TK',
        rutConsultante: '12345678-5',
        rutCompany: '76543210-3',
        rutReceptor: '60803000-K',
        tipoDte: 33,
        folio: 17,
        fechaEmision: '2026-02-30',
        montoTotal: 1,
      };
      let thrown: unknown;
      try {
        await client.queryDocumentStatus(q);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(RangeError);
      expect(fake.requests).to.have.length(0);
      const e = await expectSiiError(client.queryDocumentStatus({ ...q, fechaEmision: '2026-02-28' }));
      expect(e.kind).to.equal('auth');
    });

    it('an Axis Server fault with HTTP 500 is transient; a Client fault is a protocol error', async () => {
      fake.on(
        '/DTEWS/QueryEstUp.jws',
        { status: 500, body: soapFault('soapenv:Server.userException', 'java.lang.NullPointerException') },
        { status: 500, body: soapFault('soapenv:Client', 'No such operation getEstUpX') },
      );
      const client = clientFor(fake);
      const q = { env: 'cert' as const, token: 'TK', rutCompany: '76543210-3', trackId: '7' };
      const a = await expectSiiError(client.queryUploadStatus(q));
      expect([a.kind, a.httpStatus]).to.deep.equal(['transient', 500]);
      const b = await expectSiiError(client.queryUploadStatus(q));
      expect([b.kind, b.retryable]).to.deep.equal(['protocol', false]);
    });
  });

  describe('register of acceptance and claims', () => {
    const ref = { env: 'cert' as const, token: 'TK9', rutEmisor: '76543210-3', tipoDoc: 33, folio: 17 };

    it('ingresarAceptacionReclamoDoc: document/literal body, Cookie TOKEN, codResp and descResp', async () => {
      fake.on(REGISTER_PATH, {
        body: registerReply(
          'ingresarAceptacionReclamoDoc',
          '<codResp>0</codResp><descResp>Accion Completada OK</descResp>',
        ),
      });
      const r = await clientFor(fake).ingresarAceptacionReclamoDoc({ ...ref, accionDoc: 'ACD' });
      expect(r).to.deep.equal({ codResp: 0, descResp: 'Accion Completada OK' });
      const [req] = fake.requests;
      expect(req!.headers.cookie).to.equal('TOKEN=TK9');
      expect(soapCall(req!)).to.deep.equal({
        ns: 'http://ws.registroreclamodte.diii.sdi.sii.cl',
        method: 'ingresarAceptacionReclamoDoc',
        params: [
          ['rutEmisor', '76543210'],
          ['dvEmisor', '3'],
          ['tipoDoc', '33'],
          ['folio', '17'],
          ['accionDoc', 'ACD'],
        ],
      });
      // parameters carry no namespace (document/literal with unqualified children)
      expect(req!.body.toString()).to.match(/<rutEmisor>76543210<\/rutEmisor>/);
    });

    it('listarEventosHistDoc returns the events; consultarFechaRecepcionSii the plain string', async () => {
      fake.on(
        REGISTER_PATH,
        {
          body: registerReply(
            'listarEventosHistDoc',
            '<codResp>15</codResp><descResp>Listado de eventos del documento</descResp>' +
              '<listaEventosDoc><codEvento>ACD</codEvento><descEvento>Acepta Contenido del Documento</descEvento>' +
              '<rutResponsable>12345678</rutResponsable><dvResponsable>5</dvResponsable><fechaEvento>29-09-2026 12:05:36</fechaEvento></listaEventosDoc>' +
              '<listaEventosDoc><codEvento>NCA</codEvento><descEvento>Recepcion de NC de anulacion</descEvento>' +
              '<rutResponsable>76543210</rutResponsable><dvResponsable>3</dvResponsable><fechaEvento>30-09-2026 08:00:00</fechaEvento></listaEventosDoc>',
          ),
        },
        { body: registerReply('consultarFechaRecepcionSii', '05-08-2017 11:03:51') },
      );
      const client = clientFor(fake);
      const h = await client.listarEventosHistDoc(ref);
      expect(h.codResp).to.equal(15);
      expect(h.eventos).to.deep.equal([
        {
          codEvento: 'ACD',
          descEvento: 'Acepta Contenido del Documento',
          rutResponsable: '12345678-5',
          fechaEvento: '29-09-2026 12:05:36',
        },
        {
          codEvento: 'NCA',
          descEvento: 'Recepcion de NC de anulacion',
          rutResponsable: '76543210-3',
          fechaEvento: '30-09-2026 08:00:00',
        },
      ]);
      expect(await client.consultarFechaRecepcionSii(ref)).to.equal('05-08-2017 11:03:51');
    });

    it('the "TOKEN invalido" fault is auth; codResp -1 is transient; a type outside 33/34/43 is refused locally', async () => {
      fake.on(
        REGISTER_PATH,
        { status: 500, body: soapFault('S:Server', 'Error de Autenticacion: TOKEN invalido') },
        {
          body: registerReply(
            'consultarDocDteCedible',
            '<codResp>-1</codResp><descResp>Error Interno</descResp>',
          ),
        },
      );
      const client = clientFor(fake);
      const a = await expectSiiError(client.consultarDocDteCedible(ref));
      expect(a.kind).to.equal('auth');
      const b = await expectSiiError(client.consultarDocDteCedible(ref));
      expect([b.kind, b.retryable, b.siiCode]).to.deep.equal(['transient', true, '-1']);
      let thrown: unknown;
      try {
        await client.consultarDocDteCedible({ ...ref, tipoDoc: 61 });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(RangeError);
      expect(fake.requests).to.have.length(2);
    });
  });
});
