/**
 * The RCV read against recorded answers of the SII's own services (fixtures/rcv, their README
 * says where each field comes from): what the client sends (path, namespace, conversationId,
 * data), every field of the register read, NO_INCLUIR kept as such, and the failures classified.
 */
import { expect } from 'chai';
import { interpretFacadeReply, isSiiError, rcvFacadeUrl, SiiClient, simulatorEndpoints } from '../src';
import { RecordedRcvServer } from './rcv-recorded-server';

const reply = (status: number, body: unknown) => ({
  status,
  headers: {},
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

function kindOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (isSiiError(err)) return err.kind;
    throw err;
  }
  return 'none';
}

describe('sii-client: RCV through the SII facade (recorded answers)', () => {
  let server: RecordedRcvServer;
  before(async () => {
    server = await new RecordedRcvServer().start();
  });
  after(() => server.close());

  const read = (operacion: 'compras' | 'ventas') =>
    new SiiClient({ endpoints: simulatorEndpoints(server.url) }).readRcv({
      env: 'cert',
      token: 'TOKEN123',
      rutEmpresa: '76.086.428-5',
      operacion,
      periodo: '2026-10',
    });

  it('asks getResumen per state and getDetalleCompra per type, as the web application does', async () => {
    server.requests.length = 0;
    await read('compras');
    const resumen = server.requests.filter((r) => r.path.endsWith('/getResumen'));
    expect(resumen.map((r) => r.body.data.estadoContab)).to.deep.equal([
      'REGISTRO',
      'PENDIENTE',
      'NO_INCLUIR',
      'RECLAMADO',
    ]);
    const first = server.requests[0]!;
    expect(first.path).to.equal('/cert/consdcvinternetui/services/data/facadeService/getResumen');
    expect(first.cookie).to.equal('TOKEN=TOKEN123');
    expect(first.body.metaData).to.include({
      namespace: 'cl.sii.sdi.lob.diii.consdcv.data.api.interfaces.FacadeService/getResumen',
      conversationId: 'TOKEN123',
      page: null,
    });
    expect(first.body.data).to.deep.include({
      rutEmisor: '76086428',
      dvEmisor: '5',
      ptributario: '202610',
      operacion: 'COMPRA',
    });
    const detalle = server.requests.filter((r) => r.path.endsWith('/getDetalleCompra'));
    expect(detalle.map((r) => [r.body.data.estadoContab, r.body.data.codTipoDoc])).to.deep.equal([
      ['REGISTRO', 33],
      ['PENDIENTE', 33],
      ['NO_INCLUIR', 33],
      ['RECLAMADO', 33],
    ]);
    expect(detalle[0]!.body.data).to.include({
      accionRecaptcha: 'RCV_DETC',
      tokenRecaptcha: 't-o-k-e-n-web',
    });
  });

  it('reads every field of a purchase row: recoverable and non-recoverable VAT, other taxes, purchase type, acceptance and claim dates', async () => {
    const r = await read('compras');
    const by = (folio: number) => r.documentos.find((d) => d.folio === folio)!;
    expect(r.documentos.map((d) => [d.folio, d.estado])).to.deep.equal([
      [1201, 'REGISTRO'],
      [1202, 'REGISTRO'],
      [88, 'REGISTRO'],
      [1400, 'PENDIENTE'],
      [1300, 'NO_INCLUIR'],
      [1500, 'RECLAMADO'],
    ]);
    expect(by(1201)).to.deep.include({
      tipoDte: 33,
      rutEmisor: '96543210-8',
      rutReceptor: '76086428-5',
      razonSocial: 'PROVEEDOR SPA',
      fchEmis: '2026-10-02',
      // 02/10/2026 10:21:07 in Chile (UTC-3 in October)
      fechaRecepcion: '2026-10-02T13:21:07.000Z',
      fechaAcuse: '2026-10-05T19:40:12.000Z',
      fechaReclamo: null,
      mntNeto: 200_000,
      iva: 38_000,
      ivaNoRecuperable: 0,
      mntTotal: 238_000,
      tipoCompra: 1,
    });
    expect(by(1201).eventos).to.deep.equal(['ACD']);
    expect(by(1201).otrosImpuestos).to.deep.equal({ total: 0, codigo: null, tasa: null });
    expect(by(1202)).to.deep.include({
      iva: 0,
      ivaNoRecuperable: 19_000,
      codIvaNoRecuperable: 2,
      tipoCompra: 6,
    });
    expect(by(88)).to.deep.include({
      rutEmisor: '77888999-K',
      razonSocial: 'DISTRIBUIDORA DEL SUR LTDA',
      mntExe: 5_000,
      ivaUsoComun: 30_400,
      mntActivoFijo: 160_000,
      ivaActivoFijo: 30_400,
      tipoCompra: 5,
      mntTotal: 211_400,
    });
    expect(by(88).otrosImpuestos).to.deep.equal({ total: 16_000, codigo: 27, tasa: 10 });
    expect(by(1500)).to.deep.include({ fechaReclamo: '2026-10-06T14:15:00.000Z' });
    expect(by(1500).eventos).to.deep.equal(['RCD']);
    // the SII's rows say nothing of a transfer
    expect('cesion' in by(1201)).to.equal(false);
  });

  it('sales: the company is the issuer, the row names the receiver; resumen-only types (boletas) are not asked in detail', async () => {
    server.requests.length = 0;
    const r = await read('ventas');
    expect(r.documentos).to.have.length(1);
    expect(r.documentos[0]).to.deep.include({
      folio: 501,
      rutEmisor: '76086428-5',
      rutReceptor: '11222333-9',
      razonSocial: 'CLIENTE FINAL SPA',
      estado: 'REGISTRO',
      tipoCompra: null,
    });
    expect(
      server.requests.filter((x) => x.path.endsWith('/getDetalleVenta')).map((x) => x.body.data.codTipoDoc),
    ).to.deep.equal([33]);
  });

  it('classifies failures: 401 and a login page auth, 403 rejected, 5xx transient, respEstado ≠ 0 rejected, garbage protocol', () => {
    expect(kindOf(() => interpretFacadeReply(reply(401, { error: 'x' }), 'getResumen'))).to.equal('auth');
    expect(kindOf(() => interpretFacadeReply(reply(403, { error: 'x' }), 'getResumen'))).to.equal('rejected');
    expect(kindOf(() => interpretFacadeReply(reply(503, 'Error 500'), 'getResumen'))).to.equal('transient');
    expect(
      kindOf(() =>
        interpretFacadeReply(
          reply(200, { data: null, respEstado: { codRespuesta: 2, msgeRespuesta: 'Error de parámetros' } }),
          'getResumen',
        ),
      ),
    ).to.equal('rejected');
    // the login page instead of JSON: the session was not accepted (a session renews once)
    expect(
      kindOf(() => interpretFacadeReply(reply(200, '<html><body>login</body></html>'), 'getResumen')),
    ).to.equal('auth');
    expect(kindOf(() => interpretFacadeReply(reply(200, 'not json'), 'getResumen'))).to.equal('protocol');
    expect(kindOf(() => interpretFacadeReply(reply(200, { data: 'x' }), 'getResumen'))).to.equal('protocol');
    expect(
      interpretFacadeReply(reply(200, { data: null, respEstado: { codRespuesta: 0 } }), 'getResumen'),
    ).to.deep.equal([]);
  });

  it('speaks to www4.sii.cl for the real SII', () => {
    const c = new SiiClient({});
    expect(rcvFacadeUrl(c.transport, 'prod', 'getResumen')).to.equal(
      'https://www4.sii.cl/consdcvinternetui/services/data/facadeService/getResumen',
    );
  });
});
