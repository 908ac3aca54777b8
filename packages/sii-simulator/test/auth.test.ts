import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { signSeedDocument } from '@dte/engine';
import { admin, getSeed, getToken, rpc, textOf, upload } from './support/client';
import { opensslIdentity, signSeedWithXmlsec1 } from './support/independent';
import { COMPANY, credentialFor, OTHER_USER, SENDER, World } from './support/world';

describe('sii-simulator: CrSeed and GetTokenFromSeed', () => {
  let w: World;
  let dir: string;
  before(async () => {
    w = await World.start({ seedTtlMs: 120_000 });
    await w.enrol('cert');
    dir = mkdtempSync(path.join(tmpdir(), 'sii-sim-auth-'));
  });
  after(async () => {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers getSeed with the SII RPC envelope: escaped SII:RESPUESTA, ESTADO 00 and a 12-digit SEMILLA', async () => {
    const r = await rpc(w.base('cert'), 'CrSeed', 'getSeed', []);
    expect(r.status).to.equal(200);
    expect(r.body).to.contain('xmlns:ns1="https://maullin.sii.cl/DTEWS/CrSeed.jws"');
    expect(r.body).to.contain('<getSeedReturn xsi:type="xsd:string">&lt;?xml');
    expect(r.respuesta).to.contain('<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">');
    expect(textOf(r.respuesta, 'ESTADO')).to.equal('00');
    expect(textOf(r.respuesta, 'SEMILLA')).to.match(/^\d{12}$/);
    const prod = await rpc(w.base('prod'), 'CrSeed', 'getSeed', []);
    expect(prod.body).to.contain('https://palena.sii.cl/DTEWS/CrSeed.jws');
  });

  it('gives a token for a seed signed by the engine, and the token opens the upload', async () => {
    const seed = await getSeed(w.base('cert'));
    const t = await getToken(w.base('cert'), signSeedDocument(seed, credentialFor(SENDER)));
    expect(t.estado).to.equal('00');
    expect(t.glosa).to.equal('Token Creado');
    expect(t.token).to.match(/^[A-Za-z0-9]{10,}$/);
    // the token is accepted: an empty file passes authentication and fails on size (2), not 5
    const up = await upload(w.base('cert'), {
      token: t.token,
      sender: SENDER,
      company: COMPANY,
      file: Buffer.alloc(0),
    });
    expect(up.status).to.equal('2');
  });

  it('gives a token for a seed signed by xmlsec1 with an openssl certificate', async () => {
    const seed = await getSeed(w.base('cert'));
    const t = await getToken(w.base('cert'), signSeedWithXmlsec1(dir, seed, opensslIdentity(dir, SENDER)));
    expect(t.estado).to.equal('00');
    expect(t.token).to.be.a('string');
  });

  it('refuses a reused seed (08), an unknown seed (08), and a seed of the other environment (08)', async () => {
    const seed = await getSeed(w.base('cert'));
    const signed = signSeedDocument(seed, credentialFor(SENDER));
    expect((await getToken(w.base('cert'), signed)).estado).to.equal('00');
    const again = await getToken(w.base('cert'), signed);
    expect(again.estado).to.equal('08');
    expect(again.glosa).to.contain('SEED CON TOKEN');
    const unknown = await getToken(w.base('cert'), signSeedDocument('999999999999', credentialFor(SENDER)));
    expect(unknown.glosa).to.contain('NO Existe SEED');
    const prodSeed = await getSeed(w.base('prod'));
    expect(
      (await getToken(w.base('cert'), signSeedDocument(prodSeed, credentialFor(SENDER)))).estado,
    ).to.equal('08');
  });

  it('refuses a seed older than its lifetime with 08 TIME-OUT DEL SEED', async () => {
    const seed = await getSeed(w.base('cert'));
    const signed = signSeedDocument(seed, credentialFor(SENDER));
    await admin(w.sim.url, 'POST', '/admin/clock', { advanceMs: 121_000 });
    try {
      const t = await getToken(w.base('cert'), signed);
      expect(t.estado).to.equal('08');
      expect(t.glosa).to.contain('TIME-OUT DEL SEED');
    } finally {
      await admin(w.sim.url, 'POST', '/admin/clock', { offsetMs: 0 });
    }
  });

  it('answers 05 for a tampered seed, 04 without Signature, 06 without Semilla, 02 for non-XML', async () => {
    const seed = await getSeed(w.base('cert'));
    const signed = signSeedDocument(seed, credentialFor(SENDER));
    const tampered = signed.replace(`<Semilla>${seed}</Semilla>`, `<Semilla>${seed.slice(0, -1)}9</Semilla>`);
    expect(tampered).to.not.equal(signed);
    expect((await getToken(w.base('cert'), tampered)).estado).to.equal('05');
    const unsigned = `<getToken><item><Semilla>${seed}</Semilla></item></getToken>`;
    expect((await getToken(w.base('cert'), unsigned)).estado).to.equal('04');
    const noSeed = signed.replace(/<item>.*<\/item>/, '<item/>');
    expect((await getToken(w.base('cert'), noSeed)).estado).to.equal('06');
    expect((await getToken(w.base('cert'), 'not xml at all <')).estado).to.equal('02');
  });

  it('answers -07 to a certificate whose RUT is not enrolled (strict mode), and -3 to an expired certificate', async () => {
    const seed = await getSeed(w.base('cert'));
    const t = await getToken(w.base('cert'), signSeedDocument(seed, credentialFor(OTHER_USER)));
    expect(t.estado).to.equal('-07');
    const expired = credentialFor(SENDER, {
      notBefore: new Date(Date.now() - 40 * 86_400_000),
      notAfter: new Date(Date.now() - 10 * 86_400_000),
    });
    const seed2 = await getSeed(w.base('cert'));
    const t2 = await getToken(w.base('cert'), signSeedDocument(seed2, expired));
    expect(t2.estado).to.equal('-3');
  });

  it('answers a SOAP Fault (HTTP 500) to a malformed envelope or an unknown operation', async () => {
    const bad = await fetch(`${w.base('cert')}/DTEWS/CrSeed.jws`, { method: 'POST', body: '<nope' });
    expect(bad.status).to.equal(500);
    expect(await bad.text()).to.contain('<soapenv:Fault>');
    const r = await rpc(w.base('cert'), 'CrSeed', 'getNothing', []);
    expect(r.status).to.equal(500);
    expect(r.body).to.contain('No such operation');
  });
});
