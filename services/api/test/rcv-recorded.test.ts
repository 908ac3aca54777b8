/**
 * A recorded answer of the SII's own RCV services (packages/sii-client/test/fixtures/rcv, in
 * the SII's format: their README says where each field comes from) synchronized through the
 * sync services/rcv-sync runs (syncPeriod, real PostgreSQL) and read over HTTP: every field of
 * the register row in GET /rcv, NO_INCLUIR shown as not_included (never as registered), in the
 * register and in the purchases inbox.
 */
import { syncPeriod, type RcvSource } from '@dte/reception';
import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { expect } from 'chai';
import { RecordedRcvServer } from '../../../packages/sii-client/test/rcv-recorded-server';
import { call, startTestApi, type TestApi } from './support/test-api';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('RCV: a recorded answer of the SII synced with all its fields (GET /rcv, /recepcion)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let recorded: RecordedRcvServer;
  let key: string;
  let companyId: string;
  const periodo = '2026-10';

  before(async () => {
    recorded = await new RecordedRcvServer().start();
    t = await startTestApi({});
    const s = await t.seed({});
    key = s.api_key;
    companyId = s.company_id;
    const sii = new SiiClient({ endpoints: simulatorEndpoints(recorded.url), timeoutMs: 5000 });
    const source: RcvSource = {
      read: (q) =>
        sii.readRcv({
          env: q.env,
          token: 'RECORDED',
          rutEmpresa: q.rut,
          operacion: q.operacion,
          periodo: q.periodo,
        }),
    };
    const r = await syncPeriod(t.db.dataSource, source, {
      companyId,
      env: 'cert',
      periodo,
      now: new Date('2026-11-02T12:00:00Z'),
    });
    expect(r.outcome).to.equal('synced');
  });
  after(async () => {
    await t?.close();
    await recorded?.close();
  });

  it('GET /rcv shows every field of the register: VAT recoverable and not, common use, fixed assets, other taxes, purchase type, acceptance and claim dates', async () => {
    const res = await call<Doc>(t.url, 'GET', `/rcv?periodo=${periodo}`, { key });
    expect(res.status, res.text).to.equal(200);
    const compras = res.body.compras as Doc[];
    const by = (folio: number) => compras.find((d) => d.folio === folio)!;
    expect(compras.map((d) => d.folio).sort((a: number, b: number) => a - b)).to.deep.equal([
      88, 1201, 1202, 1300, 1400, 1500,
    ]);
    expect(by(1201)).to.deep.include({
      rut_emisor: '96543210-8',
      monto_neto: 200_000,
      iva: 38_000,
      monto_total: 238_000,
      sii_estado: 'accepted',
    });
    expect(by(1201).fecha_recepcion_sii).to.equal('2026-10-02T13:21:07.000Z');
    expect(by(1201).registro).to.deep.include({
      razon_social: 'PROVEEDOR SPA',
      estado_registro: 'REGISTRO',
      iva_recuperable: 38_000,
      iva_no_recuperable: 0,
      tipo_compra: 1,
      fecha_acuse: '2026-10-05T19:40:12.000Z',
      fecha_reclamo: null,
    });
    expect(by(1202).registro).to.deep.include({
      iva_recuperable: 0,
      iva_no_recuperable: 19_000,
      codigo_iva_no_recuperable: 2,
      tipo_compra: 6,
    });
    expect(by(88).registro).to.deep.include({
      razon_social: 'DISTRIBUIDORA DEL SUR LTDA',
      iva_uso_comun: 30_400,
      monto_activo_fijo: 160_000,
      iva_activo_fijo: 30_400,
      tipo_compra: 5,
    });
    expect(by(88).registro.otros_impuestos).to.deep.equal({ total: 16_000, codigo: 27, tasa: 10 });
    expect(by(1500)).to.deep.include({ sii_estado: 'claimed' });
    expect(by(1500).registro.fecha_reclamo).to.equal('2026-10-06T14:15:00.000Z');
    expect(by(1400)).to.deep.include({ sii_estado: 'pending' });
    // NO_INCLUIR is not registered
    expect(by(1300)).to.deep.include({ sii_estado: 'not_included' });
    expect(by(1300).registro).to.deep.include({ estado_registro: 'NO_INCLUIR', tipo_compra: 7 });
    const ventas = res.body.ventas as Doc[];
    expect(ventas.map((d) => [d.folio, d.rut_receptor, d.sii_estado])).to.deep.equal([
      [501, '11222333-9', 'accepted'],
    ]);
    expect(ventas[0].registro).to.deep.include({ razon_social: 'CLIENTE FINAL SPA', tipo_compra: null });
  });

  it('the purchases inbox shows NO_INCLUIR as not_included and the register name of the supplier', async () => {
    const res = await call<Doc>(t.url, 'GET', '/recepcion?pageSize=500', { key });
    expect(res.status, res.text).to.equal(200);
    const by = (folio: number) => (res.body.documentos as Doc[]).find((d) => d.folio === folio)!;
    expect(by(1300).sii_estado).to.equal('not_included');
    expect(by(88).razon_social_emisor).to.equal('DISTRIBUIDORA DEL SUR LTDA');
    expect(by(1201).sii_estado).to.equal('accepted');
  });
});
