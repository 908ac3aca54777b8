/**
 * The exchange replies over HTTP against a real PostgreSQL, the SII simulator's register and a
 * real local SMTP receiver: a partly bad supplier envelope is stored and answered document by
 * document; the RespuestaDTE (RecepcionEnvio, then ResultadoDTE after ACD) and the EnvioRecibos
 * (after ERM) are downloadable with the charset of their bytes, valid against the SII schemas
 * (xmllint), signed (xmlsec1), and mailed to the supplier's exchange address with retries.
 */
import { santiagoDate, santiagoDayEnd } from '@dte/engine';
import { syncPeriod } from '@dte/reception';
import { ExchangeReplyDelivery } from '@dte/receptor-delivery';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { xmllintSchema, xmlsecVerify } from '../../../packages/dte-engine/test/support/oracles';
import {
  intercambio,
  invoice,
  signed,
  type Supplier,
} from '../../../packages/reception/test/support/supplier';
import { SmtpSink } from '../../webhooks/test/support/smtp';
import { startReceptionWorld, type ReceptionWorld } from './support/reception-world';
import { call, type TestApi } from './support/test-api';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('exchange replies to suppliers: RespuestaDTE and EnvioRecibos (api + SII simulator + SMTP)', function () {
  this.timeout(120_000);
  let w: ReceptionWorld;
  let t: TestApi;
  let key: string;
  let rut: string;
  let companyId: string;
  let smtp: SmtpSink;
  // its CAF signed with the simulator's SII key, as the SII grants real ones (reception verifies it)
  let supplier: Supplier;
  const SUPPLIER_MAIL = 'dte@proveedor.test';
  const today = santiagoDate(new Date());

  const post = async (xml: Buffer, query = '') => {
    const res = await fetch(`${t.url}/recepcion/intercambio${query}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/xml' },
      body: xml,
    });
    return { status: res.status, body: (await res.json()) as Doc };
  };
  const download = async (path: string, k = key) => {
    const res = await fetch(`${t.url}${path}`, { headers: { Authorization: `Bearer ${k}` } });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  };
  const sender = (smtpUrl: string) =>
    new ExchangeReplyDelivery({
      dataSource: t.db.dataSource,
      smtpUrl,
      mailFrom: 'DTE <dte@test.local>',
      settings: { backoffMs: 1, backoffMaxMs: 1 },
    });

  before(async () => {
    smtp = await new SmtpSink().start();
    w = await startReceptionWorld();
    ({ t, key, rut, companyId, supplier } = w);
  });
  after(async () => {
    await w?.close();
    await smtp?.close();
  });

  let goodId: string;
  let goodFolio: number;

  it('a partly bad envelope: the good DTEs stored, the bad ones listed, one signed RespuestaDTE answering each document', async () => {
    const good = signed(supplier, invoice(supplier, rut, 40_000));
    goodFolio = supplier.next - 1;
    const forged = signed(supplier, invoice(supplier, rut, 10_000)).replace(
      '<NmbItem>Insumo</NmbItem>',
      '<NmbItem>Insumos</NmbItem>',
    );
    const other = signed(supplier, invoice(supplier, '77777777-7', 5_000));
    const res = await post(
      intercambio(supplier, [good, forged, other], rut),
      `?correo_emisor=${encodeURIComponent(SUPPLIER_MAIL)}&nombre_archivo=envio-proveedor.xml`,
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.documentos.map((d: Doc) => d.folio)).to.deep.equal([goodFolio]);
    expect(res.body.rechazados.map((r: Doc) => [r.indice, r.motivo, r.estado_recepcion])).to.deep.equal([
      [1, 'firma_dte_invalida', 1],
      [2, 'dte_para_otra_empresa', 3],
    ]);
    expect(res.body.respuesta.id).to.be.a('string');
    goodId = res.body.documentos[0].id;
    const stored = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM recepcion_documentos WHERE company_id = $1`,
      [companyId],
    );
    expect(stored[0].n).to.equal(1);

    const r = await download(`/recepcion/${goodId}/respuesta`);
    expect(r.status).to.equal(200);
    expect(r.type).to.equal('application/xml; charset=ISO-8859-1');
    const text = r.bytes.toString('latin1');
    expect(text.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>')).to.equal(true);
    expect(text).to.contain('<NmbEnvio>envio-proveedor.xml</NmbEnvio>');
    expect(text).to.contain(`<RutResponde>${rut}</RutResponde><RutRecibe>96543210-8</RutRecibe>`);
    expect([...text.matchAll(/<EstadoRecepDTE>(\d+)<\/EstadoRecepDTE>/g)].map((m) => m[1])).to.deep.equal([
      '0',
      '1',
      '3',
    ]);
    const v = xmllintSchema(r.bytes, 'RespuestaEnvioDTE_v10.xsd');
    expect(v.ok, v.output).to.equal(true);
    const sig = xmlsecVerify(r.bytes, undefined, ['Resultado']);
    expect(sig.ok, sig.output).to.equal(true);
    // no result, no receipt yet
    expect((await download(`/recepcion/${goodId}/respuesta?tipo=resultado`)).status).to.equal(404);
    expect((await download(`/recepcion/${goodId}/recibo`)).status).to.equal(404);
    expect((await download(`/recepcion/${goodId}/respuesta?tipo=otro`)).status).to.equal(400);
  });

  it('a file whose every DTE is refused is refused whole and stores nothing, yet answered document by document', async () => {
    const before = await t.db.dataSource.query(`SELECT count(*)::int AS n FROM recepcion_documentos`);
    const other = signed(supplier, invoice(supplier, '77777777-7', 5_000));
    const res = await post(intercambio(supplier, [other], rut));
    expect(res.status).to.equal(400);
    expect(JSON.stringify(res.body)).to.contain('dte_para_otra_empresa');
    const after = await t.db.dataSource.query(`SELECT count(*)::int AS n FROM recepcion_documentos`);
    expect(after[0].n).to.equal(before[0].n);
    const detail = (res.body.error?.detail ?? res.body.detail) as Doc;
    const reply = await download(`/recepcion/respuestas/${detail.respuesta_id}`);
    expect(reply.status).to.equal(200);
    const text = reply.bytes.toString('latin1');
    expect(text).to.contain('<EstadoRecepEnv>0</EstadoRecepEnv>');
    expect(text).to.contain('<EstadoRecepDTE>3</EstadoRecepDTE>');
    expect(xmllintSchema(reply.bytes, 'RespuestaEnvioDTE_v10.xsd').ok).to.equal(true);
  });

  it('an envelope refused whole (addressed to another company) is answered: EstadoRecepEnv 3, signed, by its own id', async () => {
    const good = signed(supplier, invoice(supplier, rut, 1_000));
    const res = await post(intercambio(supplier, [good], '77777777-7'));
    expect(res.status).to.equal(400);
    const detail = (res.body.error?.detail ?? res.body.detail) as Doc;
    expect(detail.motivo).to.equal('sobre_para_otra_empresa');
    expect(detail.respuesta_id).to.be.a('string');
    const reply = await download(`/recepcion/respuestas/${detail.respuesta_id}`);
    expect(reply.status).to.equal(200);
    expect(reply.type).to.equal('application/xml; charset=ISO-8859-1');
    const text = reply.bytes.toString('latin1');
    expect(text).to.contain('<EstadoRecepEnv>3</EstadoRecepEnv>');
    expect(text).not.to.contain('<RecepcionDTE>');
    const v = xmllintSchema(reply.bytes, 'RespuestaEnvioDTE_v10.xsd');
    expect(v.ok, v.output).to.equal(true);
    const sig = xmlsecVerify(reply.bytes, undefined, ['Resultado']);
    expect(sig.ok, sig.output).to.equal(true);
    // another organization cannot read it; an unknown id is 404
    const other = await t.seed({});
    expect((await download(`/recepcion/respuestas/${detail.respuesta_id}`, other.api_key)).status).to.equal(
      404,
    );
    expect((await download(`/recepcion/respuestas/00000000-0000-4000-8000-000000000000`)).status).to.equal(
      404,
    );
  });

  it('the reply is mailed to the supplier: a failed attempt is recorded and retried, then sent once', async () => {
    const dead = await sender('smtp://127.0.0.1:1').sweep();
    expect(dead.length).to.be.greaterThan(0);
    expect(dead.every((o) => o.state === 'pending' && !!o.error)).to.equal(true);
    const [row] = await t.db.dataSource.query(
      `SELECT state, attempts, last_error FROM exchange_replies WHERE company_id = $1 AND kind = 'recepcion' AND correos <> '{}'`,
      [companyId],
    );
    expect(row).to.include({ state: 'pending', attempts: 1 });
    expect(row.last_error).to.be.a('string');
    await new Promise((r) => setTimeout(r, 5));
    const out = await sender(smtp.url).sweep();
    expect(out.map((o) => o.state)).to.include('sent');
    const mail = [...smtp.mails].reverse().find((m) => m.to.includes(SUPPLIER_MAIL));
    expect(mail, 'a mail to the supplier').to.not.equal(undefined);
    const parsed = await simpleParser(mail!.raw);
    const xml = parsed.attachments.find((a) => a.filename?.startsWith('RespuestaDTE_Recepcion'));
    expect(xml?.contentType).to.equal('application/xml');
    const downloaded = await download(`/recepcion/${goodId}/respuesta`);
    expect(xml!.content.equals(downloaded.bytes)).to.equal(true);
    const [after] = await t.db.dataSource.query(
      `SELECT state, attempts, sent_at, message_id FROM exchange_replies WHERE company_id = $1 AND kind = 'recepcion' AND correos <> '{}'`,
      [companyId],
    );
    expect(after).to.include({ state: 'sent', attempts: 2 });
    expect(after.message_id).to.be.a('string');
    // nothing is sent twice
    expect(await sender(smtp.url).sweep()).to.deep.equal([]);
  });

  it('ACD at the SII register answers the supplier with a signed ResultadoDTE (accepted); ERM with an EnvioRecibos', async () => {
    // the SII has the document (the supplier uploaded it): seed it into the simulator's register
    await w.purchase({ folio: goodFolio, mntNeto: 40_000 });
    const acd = await call<Doc>(t.url, 'POST', `/recepcion/${goodId}/eventos`, {
      key,
      json: { accion: 'ACD', confirmar: true },
    });
    expect(acd.status, acd.text).to.equal(200);
    const res = await download(`/recepcion/${goodId}/respuesta?tipo=resultado`);
    expect(res.status).to.equal(200);
    expect(res.type).to.equal('application/xml; charset=ISO-8859-1');
    const text = res.bytes.toString('latin1');
    expect(text).to.contain('<EstadoDTE>0</EstadoDTE>');
    expect(text).to.contain(`<Folio>${goodFolio}</Folio>`);
    expect(xmllintSchema(res.bytes, 'RespuestaEnvioDTE_v10.xsd').ok).to.equal(true);
    expect(xmlsecVerify(res.bytes, undefined, ['Resultado']).ok).to.equal(true);

    // a second document: ERM with the recinto → EnvioRecibos
    const second = signed(supplier, invoice(supplier, rut, 20_000));
    const folio2 = supplier.next - 1;
    const r2 = await post(intercambio(supplier, [second], rut), `?correo_emisor=${SUPPLIER_MAIL}`);
    expect(r2.status).to.equal(201);
    const id2 = r2.body.documentos[0].id as string;
    await w.purchase({ folio: folio2, mntNeto: 20_000 });
    const bad = await call<Doc>(t.url, 'POST', `/recepcion/${id2}/eventos`, {
      key,
      json: { accion: 'ERM', confirmar: true, recinto: '' },
    });
    expect(bad.status).to.equal(400);
    const erm = await call<Doc>(t.url, 'POST', `/recepcion/${id2}/eventos`, {
      key,
      json: { accion: 'ERM', confirmar: true, recinto: 'Bodega Ñuñoa' },
    });
    expect(erm.status, erm.text).to.equal(200);
    const recibo = await download(`/recepcion/${id2}/recibo`);
    expect(recibo.status).to.equal(200);
    expect(recibo.type).to.equal('application/xml; charset=ISO-8859-1');
    expect(recibo.bytes.toString('latin1')).to.contain('<Recinto>Bodega Ñuñoa</Recinto>');
    const v = xmllintSchema(recibo.bytes, 'EnvioRecibos_v10.xsd');
    expect(v.ok, v.output).to.equal(true);
    const ids = ['DocumentoRecibo', 'SetRecibos'];
    expect(
      xmlsecVerify(recibo.bytes, "/*[local-name()='EnvioRecibos']/*[local-name()='Signature']", ids).ok,
    ).to.equal(true);
    expect(
      xmlsecVerify(recibo.bytes, "//*[local-name()='Recibo']/*[local-name()='Signature']", ids).ok,
    ).to.equal(true);
    // and both replies are queued for the supplier's address
    const queued = await t.db.dataSource.query(
      `SELECT kind, correos FROM exchange_replies WHERE company_id = $1 AND kind IN ('resultado', 'recibo') ORDER BY kind`,
      [companyId],
    );
    expect(queued.map((q: Doc) => [q.kind, q.correos])).to.deep.equal([
      ['recibo', [SUPPLIER_MAIL]],
      ['resultado', [SUPPLIER_MAIL]],
    ]);
  });

  it('the 8-day window at its edge: more than 192 h after the reception, still open until midnight (Chile) of the 8th day', async () => {
    // received at 00:00:01 (Chile) eight days ago: +192 h passed a second after today's midnight
    const day = (offset: number) =>
      new Date(Date.parse(`${today}T12:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
    const received = new Date(santiagoDayEnd(day(-9)).getTime() + 1000);
    expect(Date.now() - received.getTime()).to.be.above(192 * 3600_000);
    const folio = 7001;
    await w.purchase({ folio, fchEmis: day(-8), mntNeto: 10_000, fechaRecepcion: received.toISOString() });
    const r = await syncPeriod(t.db.dataSource, w.rcv, {
      companyId,
      env: 'cert',
      periodo: day(-8).slice(0, 7),
    });
    expect(r.outcome).to.equal('synced');
    const list = await call<{ documentos: Doc[] }>(t.url, 'GET', '/recepcion?pageSize=500', { key });
    const d = list.body.documentos.find((x) => x.folio === folio)!;
    expect(d.sii_estado).to.equal('pending');
    expect(d.plazo).to.include({
      en_plazo: true,
      dias_restantes: 0,
      vence: santiagoDayEnd(today).toISOString(),
    });
    // the SII simulator's register applies the same rule: the claim is still in time
    const rcd = await call<Doc>(t.url, 'POST', `/recepcion/${d.id}/eventos`, {
      key,
      json: { accion: 'RCD', confirmar: true },
    });
    expect(rcd.status, rcd.text).to.equal(200);
    expect(rcd.body.reclamo).to.equal('RCD');
  });

  it("another organization cannot read a company's replies", async () => {
    const other = await t.seed({});
    expect((await download(`/recepcion/${goodId}/respuesta`, other.api_key)).status).to.equal(404);
    expect((await download(`/recepcion/${goodId}/recibo`, other.api_key)).status).to.equal(404);
  });
});
