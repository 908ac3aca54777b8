import { expect } from 'chai';
import type { Caf } from '@dte/engine';
import { admin, estUp, getSeed, register, rpc, upload, docParams } from './support/client';
import { COMPANY, envelope, factura, SENDER, signDte, World } from './support/world';

describe('sii-simulator: deterministic triggers', function () {
  this.timeout(120_000);
  let w: World;
  let token: string;
  let caf: Caf;
  let folio = 0;
  const arm = async (t: unknown) => {
    const r = await admin(w.sim.url, 'POST', '/admin/triggers', t);
    expect(r.status, JSON.stringify(r.json)).to.equal(201);
  };
  const sendValid = async () =>
    upload(w.base('cert'), {
      token,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(factura(++folio), caf)]),
    });

  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    token = await w.login('cert');
    caf = await w.grantCaf('cert', 33, 40);
  });
  after(() => w.close());
  afterEach(() => admin(w.sim.url, 'DELETE', '/admin/triggers'));

  for (const verdict of ['RSC', 'RFR', 'RCT'] as const) {
    it(`forces the next valid upload to ${verdict}, then the next one is EPR again`, async () => {
      await arm({ kind: 'verdict', verdict, env: 'cert' });
      const up = await sendValid();
      expect(up.status).to.equal('0');
      expect((await estUp(w.base('cert'), COMPANY, up.trackId!, token)).estado).to.equal(verdict);
      const next = await sendValid();
      expect((await estUp(w.base('cert'), COMPANY, next.trackId!, token)).estado).to.equal('EPR');
    });
  }

  it('forces RCH (every document rejected) and RPR (every document with reparos) inside an EPR', async () => {
    await arm([
      { kind: 'verdict', verdict: 'RCH' },
      { kind: 'verdict', verdict: 'RPR' },
    ]);
    const rch = await estUp(w.base('cert'), COMPANY, (await sendValid()).trackId!, token);
    expect([rch.estado, rch.rechazados[0], rch.aceptados[0]]).to.deep.equal(['EPR', 1, 0]);
    const rpr = await estUp(w.base('cert'), COMPANY, (await sendValid()).trackId!, token);
    expect([rpr.estado, rpr.reparos[0], rpr.aceptados[0]]).to.deep.equal(['EPR', 1, 1]);
  });

  it('answers a send as repeated (STATUS 99, no TRACKID), or with any STATUS asked for', async () => {
    await arm({ kind: 'repeated' });
    const rep = await sendValid();
    expect(rep.status).to.equal('99');
    expect(rep.trackId).to.equal(undefined);
    await arm({ kind: 'upload-status', status: 9 });
    expect((await sendValid()).status).to.equal('9');
  });

  it('keeps a send at -11 for ever', async () => {
    await arm({ kind: 'stuck' });
    const up = await sendValid();
    await admin(w.sim.url, 'POST', '/admin/clock', { advanceMs: 30 * 60_000 });
    try {
      expect((await estUp(w.base('cert'), COMPANY, up.trackId!, token)).estado).to.equal('-11');
    } finally {
      await admin(w.sim.url, 'POST', '/admin/clock', { offsetMs: 0 });
    }
  });

  it('answers HTTP 5xx for N calls of an operation, then recovers', async () => {
    await arm({ kind: 'http-error', operation: 'getEstUp', status: 503, times: 2 });
    const up = await sendValid();
    for (let i = 0; i < 2; i++) {
      const r = await rpc(w.base('cert'), 'QueryEstUp', 'getEstUp', [
        ['RutCompania', '76123456'],
        ['DvCompania', '0'],
        ['TrackId', up.trackId!],
        ['Token', token],
      ]);
      expect(r.status).to.equal(503);
      expect(r.body).to.equal('Error 503');
    }
    expect((await estUp(w.base('cert'), COMPANY, up.trackId!, token)).estado).to.equal('EPR');
    await arm({ kind: 'http-error', operation: 'upload' });
    const failed = await sendValid();
    expect([failed.httpStatus, failed.body]).to.deep.equal([500, 'Error 500']);
  });

  it('delays an answer by the given milliseconds', async () => {
    await arm({ kind: 'delay', operation: 'getSeed', ms: 400 });
    const t0 = Date.now();
    await getSeed(w.base('cert'));
    const slow = Date.now() - t0;
    const t1 = Date.now();
    await getSeed(w.base('cert'));
    const fast = Date.now() - t1;
    expect(slow).to.be.at.least(400);
    expect(fast).to.be.below(400);
  });

  it('drops the connection without an answer', async () => {
    await arm({ kind: 'drop', operation: 'ingresarAceptacionReclamoDoc' });
    let error: unknown;
    try {
      await register(
        w.base('cert'),
        'cert',
        'ingresarAceptacionReclamoDoc',
        docParams(COMPANY, 33, 1, 'ACD'),
        token,
      );
    } catch (err) {
      error = err;
    }
    expect(error, 'the request must fail at the socket').to.be.instanceOf(Error);
    // the next call is answered
    const ok = await register(
      w.base('cert'),
      'cert',
      'listarEventosHistDoc',
      docParams(COMPANY, 33, 1),
      token,
    );
    expect(ok.status).to.equal(200);
  });

  it('applies a trigger only to its environment, and refuses a malformed trigger with 422', async () => {
    await arm({ kind: 'http-error', operation: 'getSeed', env: 'prod' });
    expect((await rpc(w.base('cert'), 'CrSeed', 'getSeed', [])).status).to.equal(200);
    expect((await rpc(w.base('prod'), 'CrSeed', 'getSeed', [])).status).to.equal(500);
    const bad = await admin(w.sim.url, 'POST', '/admin/triggers', { kind: 'http-error', operation: 'nope' });
    expect(bad.status).to.equal(422);
    const listed = await admin(w.sim.url, 'GET', '/admin/triggers');
    expect(listed.json).to.deep.equal([]);
  });

  it('arms triggers from configuration at start', async () => {
    const configured = await World.start({
      triggers: [{ kind: 'http-error', operation: 'getSeed', times: 1 }],
    });
    try {
      expect((await rpc(configured.base('cert'), 'CrSeed', 'getSeed', [])).status).to.equal(500);
      expect((await rpc(configured.base('cert'), 'CrSeed', 'getSeed', [])).status).to.equal(200);
    } finally {
      await configured.close();
    }
  });
});
