// The simulator keeps its state across restarts when given a state file (SII_SIMULATOR_STATE_FILE;
// npm start uses .stack/data/sii-simulator/state.snapshot), as the real SII never forgets: the
// enrolments, the granted and used folios, the uploads and their verdicts. POST /admin/reset is
// the only way to forget. Each "restart" is a new simulator on the same file and the same keys
// (main.ts keeps those in SII_SIMULATOR_KEYS_FILE).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import { computeBheRetencion, signSeedDocument } from '@dte/engine';

import { readSimulatorConfig, type SimulatorOptions } from '../src';
import { loadState } from '../src/snapshot';
import { until } from '../../../test/support/until';
import { SimulatorState } from '../src/state';
import { admin, estUp, getSeed, getToken, upload } from './support/client';
import { COMPANY, credentialFor, envelope, factura, SENDER, signDte, today, World } from './support/world';

/** what the first simulators wrote: JSON with Maps, Sets, Dates, Buffers and bigints tagged */
function firstFormat(state: SimulatorState): string {
  return JSON.stringify({ format: 1, state }, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = key === '' ? value : this[key];
    if (typeof raw === 'function' || raw instanceof Promise) return undefined;
    if (raw instanceof Map) return { $map: [...raw.entries()] };
    if (raw instanceof Set) return { $set: [...raw.values()] };
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (Buffer.isBuffer(raw)) return { $b64: raw.toString('base64') };
    if (typeof raw === 'bigint') return { $bigint: raw.toString() };
    return value;
  });
}

describe('sii-simulator: state kept across restarts in SII_SIMULATOR_STATE_FILE', function () {
  this.timeout(120_000);
  let dir: string;
  let stateFile: string;
  let keys: SimulatorOptions['siiKeys'];
  const worlds: World[] = [];
  const start = async () => {
    const w = await World.start({ stateFile, ...(keys ? { siiKeys: keys } : {}) });
    worlds.push(w);
    keys = w.sim.siiKeys;
    return w;
  };

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sim-state-'));
    stateFile = path.join(dir, 'data', 'state.json');
  });
  after(async () => {
    for (const w of worlds) await w.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  let trackId: string;

  it('keeps enrolments, granted and used folios, uploads and verdicts through a restart', async () => {
    const first = await start();
    await first.enrol('cert');
    const token = await first.login('cert');
    const caf = await first.grantCaf('cert', 33, 5);
    expect([caf.desde, caf.hasta]).to.deep.equal([1, 5]);
    const up = await upload(first.base('cert'), {
      token,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(factura(1), caf)]),
    });
    trackId = up.trackId!;
    expect((await estUp(first.base('cert'), COMPANY, trackId, token)).estado).to.equal('EPR');
    // written within the save interval after the request, before any close (a kill -9 loses at most that)
    const saved = new SimulatorState(() => Date.now());
    await until(
      'the upload in the state file',
      async () => loadState(saved, stateFile) && saved.env.cert.uploads.has(up.trackId!),
      5_000,
    );
    expect(
      saved.env.cert.uploads.get(up.trackId!)!.documents[0],
      'one record, in its upload and by folio',
    ).to.equal(saved.env.cert.documents.get(`${COMPANY}|33|1`));
    await first.close();

    const second = await start();
    // enrolled still: the signer logs in (not -07)
    const again = await second.login('cert');
    // the folios go on after those granted before the restart
    const next = await second.grantCaf('cert', 33, 3);
    expect([next.desde, next.hasta]).to.deep.equal([6, 8]);
    // the upload and its verdict, by the same track id (the session token of before too)
    expect((await estUp(second.base('cert'), COMPANY, trackId, token)).estado).to.equal('EPR');
    const uploads = (await admin(second.sim.url, 'GET', '/admin/cert/uploads')).json as { trackId: string }[];
    expect(uploads.map((u) => u.trackId)).to.deep.equal([trackId]);
    // folio 1 was used before the restart: sent again, the SII answers the repeated document
    const docs = (await admin(second.sim.url, 'GET', '/admin/cert/documents')).json as { folio: number }[];
    expect(docs.map((d) => d.folio)).to.deep.equal([1]);
    const newUpload = await upload(second.base('cert'), {
      token: again,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(factura(6), next)]),
    });
    expect(newUpload.trackId, 'new track ids do not repeat old ones').to.not.equal(trackId);
    await second.close();
  });

  it('keeps BHEs and their numbers through a restart: numbering goes on, an old one is annulled by its number', async () => {
    const bhe = async (w: World, op: string, token: string, body: unknown) => {
      const r = await fetch(`${w.base('cert')}/bhe/${op}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: `TOKEN=${token}` },
        body: JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as Record<string, unknown> };
    };
    const emision = (monto: number) => {
      const fecha = today();
      return {
        rutEmisor: COMPANY,
        rutReceptor: '76086428-5',
        fechaEmision: fecha,
        descripcion: 'Asesoría',
        montoBruto: monto,
        retencion: computeBheRetencion(monto, fecha).retencion,
      };
    };
    const first = await start();
    const t1 = await first.login('cert');
    const a = await bhe(first, 'emitir', t1, emision(100000));
    const b = await bhe(first, 'emitir', t1, emision(200000));
    expect([a.status, a.json.numero, b.json.numero]).to.deep.equal([200, 1, 2]);
    await first.close();

    const second = await start();
    const t2 = await second.login('cert');
    const c = await bhe(second, 'emitir', t2, emision(300000));
    expect(c.json.numero, 'numbers go on after a restart').to.equal(3);
    const annulled = await bhe(second, 'anular', t2, { rutEmisor: COMPANY, numero: 1, motivo: 'error' });
    expect(annulled).to.deep.equal({ status: 200, json: { numero: 1, estado: 'ANULADA' } });
    const kept = (await fetch(`${second.base('cert')}/bhe/${COMPANY}/2`).then((r) => r.json())) as Record<
      string,
      unknown
    >;
    expect(kept).to.include({ numero: 2, montoBruto: 200000, estado: 'VIGENTE' });
    await second.close();
  });

  it('reads a state file of the first format (JSON) that an earlier simulator wrote, and goes on from it', async () => {
    const binary = readFileSync(stateFile);
    const state = new SimulatorState(() => Date.now());
    expect(loadState(state, stateFile)).to.equal(true);
    writeFileSync(stateFile, firstFormat(state));
    const w = await start();
    await w.login('cert');
    const next = await w.grantCaf('cert', 33, 2);
    expect([next.desde, next.hasta], 'the folios granted before go on').to.deep.equal([9, 10]);
    expect((await admin(w.sim.url, 'GET', '/admin/cert/uploads')).json).to.have.length(2);
    await w.close();
    expect(
      readFileSync(stateFile).subarray(0, 8).equals(binary.subarray(0, 8)),
      'written back in the current format',
    ).to.equal(true);
  });

  it('forgets only on POST /admin/reset, and stays empty after the next restart', async () => {
    const third = await start();
    expect(((await admin(third.sim.url, 'GET', '/admin/cert/companies')).json as unknown[]).length).to.equal(
      1,
    );
    expect((await admin(third.sim.url, 'POST', '/admin/reset')).status).to.equal(204);
    await third.close();
    const fourth = await start();
    expect((await admin(fourth.sim.url, 'GET', '/admin/cert/companies')).json).to.deep.equal([]);
    expect((await admin(fourth.sim.url, 'GET', '/admin/cert/uploads')).json).to.deep.equal([]);
    const t = await getToken(
      fourth.base('cert'),
      signSeedDocument(await getSeed(fourth.base('cert')), credentialFor(SENDER)),
    );
    expect(t.estado, 'nobody is enrolled after the reset').to.equal('-07');
  });

  it('refuses an unreadable state file at start, naming it and what to do', () => {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{"format":1,"state":');
    const options = readSimulatorConfig({ SII_SIMULATOR_STATE_FILE: bad });
    expect(options.stateFile).to.equal(bad);
    return World.start({ stateFile: bad }).then(
      () => expect.fail('started on a broken state file'),
      (err: Error) => expect(err.message).to.include(bad).and.include('move it away to start empty'),
    );
  });
});
