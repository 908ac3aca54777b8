/**
 * The client against the real SII simulator, started in-process and reached through
 * `simulatorEndpoints(sim.url)` only (configuration, no code switch): seed → token (the engine
 * signs the seed) → DTEUpload of an EnvioDTE signed by the engine → QueryEstUp until EPR →
 * QueryEstDte → the acceptance/claim register; then the simulator's fault triggers.
 */
import {
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  parseCaf,
  readP12,
  stampAndSignDte,
  type Caf,
  type DteDocument,
  type SigningCredential,
} from '@dte/engine';
import { startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';
import { expect } from 'chai';

import { SiiClient, SiiError, simulatorEndpoints, type UploadStatus } from '../src';

const COMPANY = '76123456-0';
const SENDER = '11111111-1';
const RECEPTOR = '77777777-7';
const FCH_RESOL = '2024-03-01';

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

function factura(folio: number, neto: number): DteDocument {
  const iva = Math.round(neto * 0.19);
  return {
    Encabezado: {
      IdDoc: { TipoDTE: 33, Folio: folio, FchEmis: today() },
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
      Totales: { MntNeto: neto, TasaIVA: 19, IVA: iva, MntTotal: neto + iva },
    },
    Detalle: [{ NroLinDet: 1, NmbItem: 'Servicio de prueba', QtyItem: 1, PrcItem: neto, MontoItem: neto }],
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sii-client against the SII simulator', function () {
  let sim: RunningSimulator;
  let client: SiiClient;
  let credential: SigningCredential;
  let caf: Caf;
  let nextFolio = 1;

  function envio(docs: DteDocument[]): Buffer {
    const now = new Date();
    const signed = docs.map((d) => stampAndSignDte(d, { caf, credential, timestamp: now }));
    return buildEnvioDte(signed, {
      rutEmisor: COMPANY,
      rutEnvia: SENDER,
      fchResol: FCH_RESOL,
      nroResol: 0,
      credential,
      timestamp: now,
    });
  }

  async function pollUntilFinal(trackId: string): Promise<UploadStatus[]> {
    const seen: UploadStatus[] = [];
    for (let i = 0; i < 100; i++) {
      const s = await client.withToken('cert', credential, (token) =>
        client.queryUploadStatus({ env: 'cert', token, rutCompany: COMPANY, trackId }),
      );
      if (seen.at(-1)?.estado !== s.estado) seen.push(s);
      if (['EPR', 'RSC', 'RFR', 'RCT'].includes(s.estado)) return seen;
      await sleep(30);
    }
    throw new Error(`no verdict for ${trackId}: ${seen.map((s) => s.estado).join(' ')}`);
  }

  before(async function () {
    sim = await startSiiSimulator({
      port: 0,
      autoEnrol: true,
      timings: { registerMs: 400, stepMs: 40 },
      cafKeyBits: 512,
    });
    client = new SiiClient({
      endpoints: simulatorEndpoints(sim.url),
      timeoutMs: 5000,
      uploadTimeoutMs: 10000,
    });
    credential = readP12(createTestP12({ rut: SENDER, name: 'Usuario de prueba', password: 'pw' }), 'pw');
    caf = parseCaf(
      createTestCaf({
        siiKey: sim.siiKeys.cert,
        rutEmisor: COMPANY,
        razonSocial: 'EMPRESA DE PRUEBA SPA',
        tipoDte: 33,
        desde: 1,
        hasta: 100,
        fechaAutorizacion: today(),
        keyBits: 512,
      }),
    );
  });

  after(async () => {
    await sim?.close();
  });

  afterEach(() => {
    sim.state.triggers.clear();
  });

  it('seed → token → upload → QueryEstUp reaches EPR with the counts, then QueryEstDte says DOK', async () => {
    const seed = await client.getSeed('cert');
    expect(seed).to.match(/^\d+$/);
    const token = await client.getToken('cert', credential);
    expect(await client.getToken('cert', credential)).to.equal(token); // cached

    const folios = [nextFolio++, nextFolio++];
    const outcome = await client.sendEnvio({
      env: 'cert',
      credential,
      rutCompany: COMPANY,
      xml: envio([factura(folios[0]!, 10000), factura(folios[1]!, 25000)]),
    });
    if (outcome.kind !== 'accepted')
      throw new Error(`upload not accepted: ${outcome.kind} ${outcome.error.message}`);
    expect(outcome.trackId).to.match(/^\d+$/);
    expect(outcome.receipt.rutCompany).to.equal(COMPANY);

    const seen = await pollUntilFinal(outcome.trackId);
    const path = seen.map((s) => `${s.estado} ${s.glosa}`).join(' | ');
    const last = seen.at(-1)!;
    expect(last.estado, path).to.equal('EPR');
    expect(last.glosa, path).to.be.a('string').and.not.equal('');
    expect(last.counts).to.deep.equal([
      { tipoDte: 33, informados: 2, aceptados: 2, rechazados: 0, reparos: 0 },
    ]);
    // whatever was seen on the way is the simulator's documented progression, in order
    const order = ['-11', 'REC', 'SOK', 'FOK', 'CRT', 'PDR', 'PRD', 'EPR'];
    const idx = seen.map((s) => order.indexOf(s.estado));
    expect(
      idx.every((v, i) => v >= 0 && (i === 0 || v > idx[i - 1]!)),
      path,
    ).to.equal(true);
    for (const s of seen.filter((x) => x.estado === '-11')) expect(s.problem).to.equal('pending');

    const doc = (folio: number, montoTotal: number) =>
      client.session(credential).queryDocumentStatus({
        env: 'cert',
        rutCompany: COMPANY,
        rutReceptor: RECEPTOR,
        tipoDte: 33,
        folio,
        fechaEmision: today(),
        montoTotal,
      });
    expect((await doc(folios[0]!, 11900)).estado).to.equal('DOK');
    expect((await doc(folios[1]!, 11900)).estado).to.equal('DNK'); // wrong amount
  });

  it('the register: reception date, assignability, ACD recorded once (7 again, 11 for a claim), then listed in the history', async () => {
    const folio = nextFolio++;
    const out = await client.sendEnvio({
      env: 'cert',
      credential,
      rutCompany: COMPANY,
      xml: envio([factura(folio, 5000)]),
    });
    if (out.kind !== 'accepted') throw new Error(`upload not accepted: ${out.kind}`);
    expect(((await pollUntilFinal(out.trackId)).at(-1) as UploadStatus).estado).to.equal('EPR');

    const ref = { env: 'cert' as const, rutEmisor: COMPANY, tipoDoc: 33, folio };
    const sii = client.session(credential);
    const fecha = await sii.consultarFechaRecepcionSii(ref);
    expect(fecha).to.match(/^\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}$/);

    // no claim or receipt recorded yet (22); assignable without claims once accepted (23)
    expect((await sii.consultarDocDteCedible(ref)).codResp).to.equal(22);
    expect((await sii.ingresarAceptacionReclamoDoc({ ...ref, accionDoc: 'ACD' })).codResp).to.equal(0);
    // event already registered
    expect((await sii.ingresarAceptacionReclamoDoc({ ...ref, accionDoc: 'ACD' })).codResp).to.equal(7);
    // cannot claim an accepted DTE
    expect((await sii.ingresarAceptacionReclamoDoc({ ...ref, accionDoc: 'RCD' })).codResp).to.equal(11);

    expect((await sii.consultarDocDteCedible(ref)).codResp).to.equal(23);

    const hist = await sii.listarEventosHistDoc(ref);
    expect(hist.codResp).to.equal(15);
    expect(hist.eventos.map((e) => [e.codEvento, e.rutResponsable])).to.deep.equal([['ACD', SENDER]]);
  });

  it('a repeated envelope (same bytes) and the "repeated" trigger both come back as repeated, without a track id', async () => {
    const xml = envio([factura(nextFolio++, 7000)]);
    const first = await client.sendEnvio({ env: 'cert', credential, rutCompany: COMPANY, xml });
    expect(first.kind).to.equal('accepted');
    const again = await client.sendEnvio({ env: 'cert', credential, rutCompany: COMPANY, xml });
    expect(again.kind).to.equal('repeated');
    expect(again.kind === 'repeated' && again.trackId).to.equal(undefined);

    sim.state.triggers.add({ kind: 'repeated' });
    const forced = await client.sendEnvio({
      env: 'cert',
      credential,
      rutCompany: COMPANY,
      xml: envio([factura(nextFolio++, 7000)]),
    });
    expect(forced.kind).to.equal('repeated');
  });

  it('a tampered envelope is uploaded (STATUS 0) and then rejected (RFR) by QueryEstUp; a forced RCT is reported as such', async () => {
    const good = envio([factura(nextFolio++, 8000)]).toString('latin1');
    const tampered = Buffer.from(
      good.replace(/<MntNeto>8000<\/MntNeto>/, '<MntNeto>8001</MntNeto>'),
      'latin1',
    );
    expect(tampered.toString('latin1')).to.not.equal(good);
    const out = await client.sendEnvio({ env: 'cert', credential, rutCompany: COMPANY, xml: tampered });
    if (out.kind !== 'accepted') throw new Error(`upload not accepted: ${out.kind}`);
    const verdict = (await pollUntilFinal(out.trackId)).at(-1)!;
    // a changed amount breaks the envelope's and the DTE's signatures: the SII's answer is RFR
    expect(verdict.estado, verdict.glosa).to.equal('RFR');

    sim.state.triggers.add({ kind: 'verdict', verdict: 'RCT' });
    const forced = await client.sendEnvio({
      env: 'cert',
      credential,
      rutCompany: COMPANY,
      xml: envio([factura(nextFolio++, 8000)]),
    });
    if (forced.kind !== 'accepted') throw new Error(`upload not accepted: ${forced.kind}`);
    expect((await pollUntilFinal(forced.trackId)).at(-1)!.estado).to.equal('RCT');
  });

  it('HTTP 500, dropped connections and slow answers from the simulator become transient SiiErrors', async () => {
    const q = (timeoutMs?: number) =>
      client.withToken('cert', credential, (token) =>
        client.queryUploadStatus({
          env: 'cert',
          token,
          rutCompany: COMPANY,
          trackId: '1',
          ...(timeoutMs ? { timeoutMs } : {}),
        }),
      );
    await client.getToken('cert', credential);

    sim.state.triggers.add({ kind: 'http-error', operation: 'getEstUp', status: 500 });
    const e1 = await q().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(e1).to.be.instanceOf(SiiError);
    expect([(e1 as SiiError).kind, (e1 as SiiError).retryable]).to.deep.equal(['transient', true]);

    sim.state.triggers.add({ kind: 'drop', operation: 'upload' });
    const dropped = await client.sendEnvio({
      env: 'cert',
      credential,
      rutCompany: COMPANY,
      xml: envio([factura(nextFolio++, 9000)]),
    });
    expect(dropped.kind).to.equal('transient');

    sim.state.triggers.add({ kind: 'delay', operation: 'getEstUp', ms: 600 });
    const e3 = await q(150).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((e3 as SiiError).kind).to.equal('transient');
    expect((e3 as SiiError).message).to.contain('timeout');
  });

  it('when the simulator expires the cached token, the next call renews it once and succeeds', async () => {
    const before = await client.getToken('cert', credential);
    const offset = sim.state.clockOffsetMs;
    sim.state.clockOffsetMs += sim.options.tokenTtlMs + 60_000;
    try {
      const used: string[] = [];
      const s = await client.withToken('cert', credential, (token) => {
        used.push(token);
        return client.queryUploadStatus({ env: 'cert', token, rutCompany: COMPANY, trackId: '1' });
      });
      expect(used[0]).to.equal(before);
      expect(used).to.have.length(2);
      expect(used[1]).to.not.equal(before);
      // an unknown track id is answered -11 (not registered) once the new token is accepted
      expect([s.estado, s.problem, s.errCode]).to.deep.equal(['-11', 'pending', '1']);
    } finally {
      sim.state.clockOffsetMs = offset;
    }
  });
});
