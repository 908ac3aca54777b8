import { expect } from 'chai';
import { acuseReciboDeadline, type Caf } from '@dte/engine';
import { admin, docParams, register, upload } from './support/client';
import {
  COMPANY,
  envelope,
  factura,
  FCH_RESOL,
  OTHER_USER,
  RECEPTOR,
  SENDER,
  signDte,
  World,
} from './support/world';

const BUYER_USER = '12345678-5';

describe('sii-simulator: acceptance/claim register (WSREGISTRORECLAMODTE)', function () {
  this.timeout(120_000);
  let w: World;
  let emitterToken: string;
  let buyerToken: string;
  let caf: Caf;
  let folio = 0;

  /** an accepted invoice from COMPANY to RECEPTOR, returns its folio */
  async function acceptedInvoice(): Promise<number> {
    const f = ++folio;
    const up = await upload(w.base('cert'), {
      token: emitterToken,
      sender: SENDER,
      company: COMPANY,
      file: envelope([signDte(factura(f), caf)]),
    });
    expect(up.status).to.equal('0');
    return f;
  }
  const reg = (method: string, params: [string, string][], token = buyerToken) =>
    register(w.base('cert'), 'cert', method, params, token);

  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    await w.enrol('cert', RECEPTOR, [BUYER_USER], FCH_RESOL);
    emitterToken = await w.login('cert');
    buyerToken = await w.login('cert', BUYER_USER);
    w.token.cert = emitterToken;
    caf = await w.grantCaf('cert', 33, 30);
  });
  after(() => w.close());

  it('records an acceptance (0), refuses it twice (7) and a later claim (11); lists the events (15)', async () => {
    const f = await acceptedInvoice();
    const ok = await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ACD'));
    expect(ok.status).to.equal(200);
    expect(ok.body).to.contain(
      '<ns2:ingresarAceptacionReclamoDocResponse xmlns:ns2="http://ws.registroreclamodte.diii.sdi.sii.cl">',
    );
    expect(ok.codResp).to.equal(0);
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ACD'))).codResp).to.equal(7);
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'RCD'))).codResp).to.equal(
      11,
    );
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ERM'))).codResp).to.equal(0);
    const list = await reg('listarEventosHistDoc', docParams(COMPANY, 33, f));
    expect(list.codResp).to.equal(15);
    expect(list.body).to.match(
      /<listaEventosDoc><codEvento>ACD<\/codEvento>.*<rutResponsable>12345678<\/rutResponsable><\/listaEventosDoc><listaEventosDoc><codEvento>ERM/,
    );
    const cedible = await reg('consultarDocDteCedible', docParams(COMPANY, 33, f));
    expect(cedible.codResp).to.equal(23);
  });

  it('after a claim: ERM gives 6, ACD gives 12, RFT after RFP gives 19; the DTE is not assignable (24)', async () => {
    const f = await acceptedInvoice();
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'RFP'))).codResp).to.equal(0);
    const erm = await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ERM'));
    expect(erm.codResp).to.equal(6);
    expect(erm.descResp).to.contain('RFP');
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ACD'))).codResp).to.equal(
      12,
    );
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'RFT'))).codResp).to.equal(
      19,
    );
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'RCD'))).codResp).to.equal(0);
    expect((await reg('consultarDocDteCedible', docParams(COMPANY, 33, f))).codResp).to.equal(24);
  });

  it('closes the window at midnight (Chile) ending the 8th calendar day after the reception (8); a document without events becomes assignable (25)', async () => {
    const f = await acceptedInvoice();
    expect((await reg('consultarDocDteCedible', docParams(COMPANY, 33, f))).codResp).to.equal(22);
    expect((await reg('listarEventosHistDoc', docParams(COMPANY, 33, f))).codResp).to.equal(16);
    const fecha = await reg('consultarFechaRecepcionSii', docParams(COMPANY, 33, f));
    expect(fecha.ret).to.match(/^\d\d-\d\d-\d{4} \d\d:\d\d:\d\d$/);
    // DD-MM-YYYY of the reception in Chile; 15:00Z of that date is the same day in Chile (UTC-3/-4)
    const [dd, mm, yyyy] = (fecha.ret as string).slice(0, 10).split('-');
    const vence = acuseReciboDeadline(new Date(`${yyyy}-${mm}-${dd}T15:00:00Z`)).getTime();
    const simNow = async () =>
      Date.parse(
        ((await admin(w.sim.url, 'POST', '/admin/clock', { advanceMs: 0 })).json as { now: string }).now,
      );
    try {
      // one second before the end of the 8th day (more than 192 h after the reception): still open
      await admin(w.sim.url, 'POST', '/admin/clock', { advanceMs: vence - 1000 - (await simNow()) });
      let t = await w.login('cert', BUYER_USER);
      expect((await reg('consultarDocDteCedible', docParams(COMPANY, 33, f), t)).codResp).to.equal(22);
      // midnight: closed
      await admin(w.sim.url, 'POST', '/admin/clock', { advanceMs: vence + 100 - (await simNow()) });
      // tokens do not live 8 days: log in again
      t = await w.login('cert', BUYER_USER);
      expect(
        (await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'RCD'), t)).codResp,
      ).to.equal(8);
      expect((await reg('consultarDocDteCedible', docParams(COMPANY, 33, f), t)).codResp).to.equal(25);
    } finally {
      await admin(w.sim.url, 'POST', '/admin/clock', { offsetMs: 0 });
    }
  });

  it('checks the caller and the parameters: 17 not the receiver, 14 neither party, 1 bad RUT, 3 type, 4 action, 18 unknown', async () => {
    const f = await acceptedInvoice();
    // the issuer may read (listar) but not accept
    expect(
      (await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ACD'), emitterToken)).codResp,
    ).to.equal(17);
    expect((await reg('listarEventosHistDoc', docParams(COMPANY, 33, f), emitterToken)).codResp).to.equal(16);
    await w.enrol('cert', '96543210-8', [OTHER_USER], FCH_RESOL);
    const stranger = await w.login('cert', OTHER_USER);
    expect((await reg('listarEventosHistDoc', docParams(COMPANY, 33, f), stranger)).codResp).to.equal(14);
    expect(
      (await reg('ingresarAceptacionReclamoDoc', docParams('76123456-1', 33, f, 'ACD'))).codResp,
    ).to.equal(1);
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 52, f, 'ACD'))).codResp).to.equal(3);
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'XXX'))).codResp).to.equal(4);
    expect((await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, 29, 'ACD'))).codResp).to.equal(
      18,
    );
    expect((await reg('consultarDocDteCedible', docParams(COMPANY, 52, f))).codResp).to.equal(20);
  });

  it('answers a SOAP Fault "TOKEN invalido" without a valid token, and keeps environments apart', async () => {
    const f = await acceptedInvoice();
    const fault = await reg('ingresarAceptacionReclamoDoc', docParams(COMPANY, 33, f, 'ACD'), 'NOPE');
    expect(fault.status).to.equal(500);
    expect(fault.body).to.contain('Error de Autenticacion: TOKEN invalido');
    // a certification token is unknown to production (ws1)
    const prod = await register(
      w.base('prod'),
      'prod',
      'listarEventosHistDoc',
      docParams(COMPANY, 33, f),
      buyerToken,
    );
    expect(prod.status).to.equal(500);
  });
});
