import { expect } from 'chai';
import {
  buildBoletaDocument,
  buildEnvioBoleta,
  stampAndSignBoleta,
  type BoletaInput,
  type Caf,
} from '@dte/engine';
import { BoletaRestClient, boletaSimulatorEndpoints, SiiError } from '../src';
import {
  COMPANY,
  credentialFor,
  FCH_RESOL,
  SENDER,
  today,
  World,
} from '../../sii-simulator/test/support/world';

const EMISOR = {
  rut: COMPANY,
  razonSocial: 'EMPRESA DE PRUEBA SPA',
  giro: 'Comercio',
  acteco: [471100],
  direccion: 'Calle 1',
  comuna: 'Santiago',
};

function boleta(tipo: 39 | 41, folio: number, caf: Caf, monto = 1190): string {
  const input: BoletaInput = {
    tipo_dte: tipo,
    rut_emisor: COMPANY,
    fecha_emision: today(),
    items: [
      { nombre: 'Producto', cantidad: 1, precio_unitario: monto, exento: tipo === 41, monto_item: monto },
    ],
  };
  return stampAndSignBoleta(buildBoletaDocument(input, { emisor: EMISOR, folio }), {
    caf,
    credential: credentialFor(SENDER),
    timestamp: new Date(),
  });
}

function envio(dtes: string[]): Buffer {
  return buildEnvioBoleta(dtes, {
    rutEmisor: COMPANY,
    rutEnvia: SENDER,
    fchResol: FCH_RESOL,
    nroResol: 0,
    credential: credentialFor(SENDER),
    timestamp: new Date(),
  });
}

describe('sii-simulator + sii-client: the boleta REST channel (semilla, token, envío, estado)', function () {
  this.timeout(120_000);
  let w: World;
  let client: BoletaRestClient;
  let caf39: Caf;
  let caf41: Caf;
  const credential = () => credentialFor(SENDER);

  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    await w.login('cert');
    caf39 = await w.grantCaf('cert', 39, 50);
    caf41 = await w.grantCaf('cert', 41, 50);
    client = new BoletaRestClient({ endpoints: boletaSimulatorEndpoints(w.sim.url) });
  });
  after(() => w.close());

  it('takes an EnvioBOLETA of 39 and 41 (REC with a track id) and reports EPR with DOK for each', async () => {
    const r = await client.enviar({
      env: 'cert',
      credential: credential(),
      rutCompany: COMPANY,
      xml: envio([boleta(39, 1, caf39), boleta(41, 1, caf41, 5000)]),
    });
    expect(r.estado).to.equal('REC');
    expect(r.trackId).to.match(/^\d+$/);
    const st = await client.estado({
      env: 'cert',
      credential: credential(),
      rutCompany: COMPANY,
      trackId: r.trackId,
    });
    expect(st.estado).to.equal('EPR');
    expect(st.estadistica).to.deep.equal([
      { tipo: 39, informados: 1, aceptados: 1, rechazados: 0, reparos: 0 },
      { tipo: 41, informados: 1, aceptados: 1, rechazados: 0, reparos: 0 },
    ]);
    expect(st.detalle).to.deep.equal([]);
  });

  it('rejects a folio sent twice (RCH for that boleta) and a repeated file (409)', async () => {
    const file = envio([boleta(39, 2, caf39)]);
    await client.enviar({ env: 'cert', credential: credential(), rutCompany: COMPANY, xml: file });
    const again = await client
      .enviar({ env: 'cert', credential: credential(), rutCompany: COMPANY, xml: file })
      .catch((e: unknown) => e);
    expect(again).to.be.instanceOf(SiiError);
    expect((again as SiiError).httpStatus).to.equal(409);
    const r = await client.enviar({
      env: 'cert',
      credential: credential(),
      rutCompany: COMPANY,
      xml: envio([boleta(39, 2, caf39, 2380)]),
    });
    const st = await client.estado({
      env: 'cert',
      credential: credential(),
      rutCompany: COMPANY,
      trackId: r.trackId,
    });
    expect(st.estado).to.equal('EPR');
    expect(st.detalle).to.have.length(1);
    expect(st.detalle[0]).to.include({ tipo: 39, folio: 2, estado: 'RCH' });
    // as the SII's boleta API shows it: a description, and the findings in error[]
    expect(st.detalle[0]!.descripcion).to.deep.equal(['Dte Rechazado']);
    expect(st.detalle[0]!.errores).to.have.length(1);
    expect(st.detalle[0]!.errores[0]).to.include({ seccion: 'DTE', nivel: 3, codigo: 1 });
    expect(st.detalle[0]!.errores[0]!.descripcion).to.match(/ya fue utilizado/);
  });

  it('answers RSC for a file that breaks EnvioBOLETA_v11.xsd, 400 for an EnvioDTE, and 401 without a token', async () => {
    const broken = Buffer.from(
      envio([boleta(39, 3, caf39)])
        .toString('latin1')
        .replace('<IndServicio>3</IndServicio>', '<IndServicio>7</IndServicio>'),
      'latin1',
    );
    const r = await client.enviar({
      env: 'cert',
      credential: credential(),
      rutCompany: COMPANY,
      xml: broken,
    });
    const st = await client.estado({
      env: 'cert',
      credential: credential(),
      rutCompany: COMPANY,
      trackId: r.trackId,
    });
    expect(st.estado).to.equal('RSC');
    const notBoleta = await client
      .enviar({
        env: 'cert',
        credential: credential(),
        rutCompany: COMPANY,
        xml: Buffer.from('<?xml version="1.0"?><EnvioDTE version="1.0"/>'),
      })
      .catch((e: unknown) => e);
    expect((notBoleta as SiiError).httpStatus).to.equal(400);
    const noToken = await fetch(
      `${w.sim.url}/cert/recursos/v1/boleta.electronica.envio/${COMPANY}-${r.trackId}`,
    );
    expect(noToken.status).to.equal(401);
  });
});
