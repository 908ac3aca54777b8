import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createTestCaf, parseCaf, signSeedDocument, verifyCafSignature } from '@dte/engine';
import { readSimulatorConfig } from '../src';
import { admin, estUp, getSeed, getToken, register, upload, docParams } from './support/client';
import {
  COMPANY,
  credentialFor,
  envelope,
  factura,
  FCH_RESOL,
  RECEPTOR,
  SENDER,
  signDte,
  today,
  World,
} from './support/world';

const BUYER_USER = '12345678-5';

describe('sii-simulator: folio grants, RCV, exchange rates, admin and configuration', function () {
  this.timeout(120_000);
  let w: World;
  let token: string;

  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    await w.enrol('cert', RECEPTOR, [BUYER_USER]);
    token = await w.login('cert');
  });
  after(() => w.close());

  it('grants consecutive, non-overlapping CAFs signed with the environment key (IDK 100 / 300)', async () => {
    const a = await w.grantCaf('cert', 34, 5);
    const b = await w.grantCaf('cert', 34, 3);
    expect([a.desde, a.hasta, b.desde, b.hasta]).to.deep.equal([1, 5, 6, 8]);
    expect(a.idk).to.equal(100);
    expect(a.fechaAutorizacion).to.equal(today());
    const keys = (await admin(w.sim.url, 'GET', '/admin/sii-keys')).json as Record<
      string,
      { idk: number; publicKeyPem: string }
    >;
    expect(keys.cert.idk).to.equal(100);
    expect(keys.prod.idk).to.equal(300);
    expect(verifyCafSignature(a, keys.cert.publicKeyPem)).to.equal(true);
    expect(verifyCafSignature(a, keys.prod.publicKeyPem)).to.equal(false);
    const refused = await fetch(`${w.base('cert')}/folios`, {
      method: 'POST',
      headers: { Cookie: `TOKEN=${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rutEmisor: RECEPTOR, tipoDte: 33, cantidad: 1 }),
    });
    expect(refused.status).to.equal(403);
    const noToken = await fetch(`${w.base('cert')}/folios`, { method: 'POST', body: '{}' });
    expect(noToken.status).to.equal(401);
  });

  it('accepts documents stamped with a CAF made from the admin-exposed SII key', async () => {
    const keys = (await admin(w.sim.url, 'GET', '/admin/sii-keys')).json as Record<string, never>;
    const caf = parseCaf(
      createTestCaf({
        siiKey: keys.cert,
        rutEmisor: COMPANY,
        razonSocial: 'X',
        tipoDte: 33,
        desde: 500,
        hasta: 510,
        fechaAutorizacion: today(),
        keyBits: 512,
      }),
    );
    const up = await upload(w.base('cert'), {
      token,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(factura(500), caf)]),
    });
    expect((await estUp(w.base('cert'), COMPANY, up.trackId!, token)).aceptados).to.deep.equal([1]);
  });

  it('serves the RCV by period: sales of the issuer, purchases of the receiver (accepted + seeded) with their state', async () => {
    const caf = await w.grantCaf('cert', 33, 2);
    const up = await upload(w.base('cert'), {
      token,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(factura(caf.desde), caf), signDte(factura(caf.hasta), caf)]),
    });
    expect(up.status).to.equal('0');
    const seeded = await admin(w.sim.url, 'POST', '/admin/cert/purchases', {
      rutReceptor: RECEPTOR,
      rutEmisor: '96543210-8',
      tipoDte: 33,
      folio: 77,
      fchEmis: today(),
      mntNeto: 100,
      mntExe: 0,
      iva: 19,
      mntTotal: 119,
    });
    expect(seeded.status).to.equal(201);
    const periodo = today().slice(0, 7);
    // the SII's own RCV format: getResumen per state, then getDetalle{Compra,Venta} per type
    const facade = async (tok: string | undefined, op: string, data: Record<string, unknown>) => {
      const res = await fetch(`${w.base('cert')}/consdcvinternetui/services/data/facadeService/${op}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(tok ? { Cookie: `TOKEN=${tok}` } : {}) },
        body: JSON.stringify({
          metaData: {
            namespace: `cl.sii.sdi.lob.diii.consdcv.data.api.interfaces.FacadeService/${op}`,
            conversationId: tok ?? '',
            transactionId: '1',
            page: null,
          },
          data,
        }),
      });
      return {
        status: res.status,
        json: (await res.json()) as {
          data: Record<string, any>[] | null; // eslint-disable-line @typescript-eslint/no-explicit-any
          respEstado?: { codRespuesta: number };
        },
      };
    };
    const side = (rut: string, operacion: 'COMPRA' | 'VENTA', estadoContab: string) => {
      const [rutEmisor, dvEmisor] = rut.split('-');
      return { rutEmisor, dvEmisor, ptributario: periodo.replace('-', ''), operacion, estadoContab };
    };
    const resumen = await facade(token, 'getResumen', side(COMPANY, 'VENTA', 'REGISTRO'));
    expect(resumen.json.respEstado?.codRespuesta).to.equal(0);
    expect(resumen.json.data!.find((r) => r.rsmnTipoDocInteger === 33)!.rsmnTotDoc).to.be.at.least(2);
    const ventas = await facade(token, 'getDetalleVenta', {
      ...side(COMPANY, 'VENTA', 'REGISTRO'),
      codTipoDoc: 33,
    });
    const mine = ventas.json.data!.filter((d) => d.detNroDoc === caf.desde || d.detNroDoc === caf.hasta);
    expect(mine).to.have.length(2);
    expect(mine[0]).to.include({ detMntNeto: 10000, detMntIVA: 1900, detTipoDoc: 33 });
    expect(mine[0]!.detFchDoc).to.match(/^\d{2}\/\d{2}\/\d{4}$/);
    expect(mine[0]!.detFecRecepcion).to.match(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/);

    const buyer = await w.login('cert', BUYER_USER);
    const claim = await register(
      w.base('cert'),
      'cert',
      'ingresarAceptacionReclamoDoc',
      docParams(COMPANY, 33, caf.desde, 'RCD'),
      buyer,
    );
    expect(claim.codResp).to.equal(0);
    const compras = async (estado: string, tok: string | undefined = buyer) =>
      facade(tok, 'getDetalleCompra', { ...side(RECEPTOR, 'COMPRA', estado), codTipoDoc: 33 });
    const folios = async (estado: string) =>
      ((await compras(estado)).json.data ?? []).map((d) => `${d.detRutDoc}-${d.detDvDoc}:${d.detNroDoc}`);
    const companyBody = COMPANY.split('-')[0];
    expect(await folios('RECLAMADO')).to.include(
      `${COMPANY}:${caf.desde}`.replace(COMPANY, `${companyBody}-${COMPANY.split('-')[1]}`),
    );
    expect(await folios('PENDIENTE')).to.include.members([`${COMPANY}:${caf.hasta}`, `96543210-8:77`]);
    const acd = await register(
      w.base('cert'),
      'cert',
      'ingresarAceptacionReclamoDoc',
      docParams('96543210-8', 33, 77, 'ACD'),
      buyer,
    );
    expect(acd.codResp).to.equal(0);
    const registro = (await compras('REGISTRO')).json.data!.find((d) => d.detNroDoc === 77)!;
    expect(registro).to.include({ detEventoReceptor: 'ACD', detRutDoc: 96543210, detDvDoc: '8' });
    expect(registro.detFecAcuse).to.match(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/);
    // the issuer's user may not read the buyer's purchases; no token → 401
    expect((await compras('REGISTRO', token)).status).to.equal(403);
    expect((await compras('REGISTRO', '')).status).to.equal(401);
    // bad parameters: the SII's error answer
    expect(
      (await facade(token, 'getResumen', { operacion: 'VENTA' })).json.respEstado?.codRespuesta,
    ).to.not.equal(0);
    w.token.cert = token;
  });

  it('serves exchange rates set by admin (latest on or before the date), 404 without one, 5xx by trigger', async () => {
    expect(
      (
        await admin(w.sim.url, 'PUT', '/admin/exchange-rates', {
          moneda: 'USD',
          fecha: '2026-11-20',
          valor: 945.12,
        })
      ).status,
    ).to.equal(200);
    const r = await admin(w.sim.url, 'GET', '/tipo-cambio/USD/2026-11-22');
    expect(r.json).to.deep.equal({
      moneda: 'USD',
      fecha: '2026-11-22',
      valor: 945.12,
      fechaPublicacion: '2026-11-20',
    });
    expect((await admin(w.sim.url, 'GET', '/tipo-cambio/USD/2026-11-19')).status).to.equal(404);
    expect((await admin(w.sim.url, 'GET', '/tipo-cambio/EUR/2026-11-22')).status).to.equal(404);
    await admin(w.sim.url, 'POST', '/admin/triggers', {
      kind: 'http-error',
      operation: 'tipoCambio',
      status: 503,
    });
    const down = await fetch(`${w.sim.url}/tipo-cambio/USD/2026-11-22`);
    expect(down.status).to.equal(503);
    expect((await admin(w.sim.url, 'GET', '/tipo-cambio/USD/2026-11-22')).status).to.equal(200);
  });

  it('lists uploads and documents, and forgets everything on reset (keys stay)', async () => {
    const uploads = (await admin(w.sim.url, 'GET', '/admin/cert/uploads')).json as {
      trackId: string;
      estadoActual: string;
    }[];
    expect(uploads.length).to.be.greaterThan(0);
    expect(uploads[0].estadoActual).to.equal('EPR');
    const docs = (await admin(w.sim.url, 'GET', '/admin/cert/documents')).json as unknown[];
    expect(docs.length).to.be.greaterThan(0);
    const before = (await admin(w.sim.url, 'GET', '/admin/sii-keys')).json;
    expect((await admin(w.sim.url, 'POST', '/admin/reset')).status).to.equal(204);
    expect((await admin(w.sim.url, 'GET', '/admin/cert/uploads')).json).to.deep.equal([]);
    expect((await admin(w.sim.url, 'GET', '/admin/cert/companies')).json).to.deep.equal([]);
    expect((await admin(w.sim.url, 'GET', '/admin/sii-keys')).json).to.deep.equal(before);
    // strict mode: after the reset, nobody is enrolled, so the login answers -07
    const t = await getToken(
      w.base('cert'),
      signSeedDocument(await getSeed(w.base('cert')), credentialFor(SENDER)),
    );
    expect(t.estado).to.equal('-07');
  });

  it('auto-enrol mode: any certificate may send for any company, the first resolution is adopted', async () => {
    const demo = await World.start({ autoEnrol: true });
    try {
      const t = await demo.login('cert');
      const caf = await demo.grantCaf('cert', 33, 3);
      const send = (f: number, fchResol: string) =>
        upload(demo.base('cert'), {
          token: t,
          sender: SENDER,
          company: COMPANY,
          file: envelope([signDte(factura(f), caf)], { fchResol }),
        });
      const first = await send(1, '2025-05-05');
      expect((await estUp(demo.base('cert'), COMPANY, first.trackId!, t)).estado).to.equal('EPR');
      const other = await send(2, FCH_RESOL);
      expect((await estUp(demo.base('cert'), COMPANY, other.trackId!, t)).estado).to.equal('RCT');
    } finally {
      await demo.close();
    }
  });

  it('serves the WSDLs with this simulator as the address and the real host as the namespace', async () => {
    const res = await fetch(`${w.base('prod')}/DTEWS/QueryEstUp.jws?WSDL`);
    expect(res.status).to.equal(200);
    const wsdl = await res.text();
    expect(wsdl).to.contain(`location="${w.base('prod')}/DTEWS/QueryEstUp.jws"`);
    expect(wsdl).to.contain('namespace="https://palena.sii.cl/DTEWS/QueryEstUp.jws"');
    expect(wsdl).to.contain('<wsdl:part name="TrackId" type="xsd:string"/>');
  });

  it('reads its configuration from the environment and refuses bad values', () => {
    const c = readSimulatorConfig({
      SII_SIMULATOR_PORT: '18999',
      SII_SIMULATOR_AUTO_ENROL: 'true',
      SII_SIMULATOR_REGISTER_MS: '0',
      SII_SIMULATOR_STEP_MS: '10',
      SII_SIMULATOR_TRIGGERS: '[{"kind":"stuck","env":"prod"}]',
    });
    expect(c).to.deep.include({
      port: 18999,
      autoEnrol: true,
      timings: { registerMs: 0, stepMs: 10 },
      triggers: [{ kind: 'stuck', env: 'prod' }],
    });
    expect(() => readSimulatorConfig({ SII_SIMULATOR_PORT: 'x' })).to.throw(/SII_SIMULATOR_PORT/);
    expect(() => readSimulatorConfig({ SII_SIMULATOR_TRIGGERS: '[{"kind":"boom"}]' })).to.throw(
      /SII_SIMULATOR_TRIGGERS/,
    );
  });

  it('runs as its own process (npm start), answers on the configured port and keeps its keys in a file', async () => {
    const pkg = path.resolve(__dirname, '..');
    const dir = mkdtempSync(path.join(tmpdir(), 'sii-sim-keys-'));
    const keysFile = path.join(dir, 'keys.json');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: pkg,
      env: { ...process.env, SII_SIMULATOR_PORT: '0', LOG_LEVEL: 'info', SII_SIMULATOR_KEYS_FILE: keysFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const certUrl = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /"cert":"(http:\/\/[^"]+)"/.exec(out);
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
        setTimeout(() => reject(new Error(`no start line: ${out}`)), 30_000);
      });
      expect(await getSeed(certUrl)).to.match(/^\d{12}$/);
      const keys = JSON.parse(readFileSync(keysFile, 'utf8')) as Record<string, { idk: number }>;
      expect([keys.cert.idk, keys.prod.idk]).to.deep.equal([100, 300]);
      // the next start reads them back
      expect(readSimulatorConfig({ SII_SIMULATOR_KEYS_FILE: keysFile }).siiKeys).to.deep.equal(keys);
    } finally {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
