/**
 * Delivery to the receptor on the real pipeline: a document issued with correo_receptor is, once
 * the SII simulator accepts it, mailed through a real local SMTP receiver as an EnvioDTE addressed
 * to the receptor (signature checked) with its printed form (PDF417 read back); a failed attempt
 * is recorded and retried; POST /dtes/:id/resend-delivery sends it again on demand.
 */
import { expect } from 'chai';
import { verifyEnvioDte } from '@dte/engine';
import { ReceptorDelivery } from '@dte/receptor-delivery';
import { simpleParser, type ParsedMail } from 'mailparser';
import { decodePdf417 } from '../../../packages/printed-form/test/support/pdf-oracles';
import { SmtpSink } from '../../webhooks/test/support/smtp';
import { body, emit, orgWithCafs } from './dtes-fixtures';
import { freePort } from '../../../test/support/pipeline-harness';
import { follow, startPipeline, type Running } from './support/pipeline';
import { call, startTestApi, type TestApi } from './support/test-api';

describe('delivery to the receptor (intercambio mail) and POST /dtes/:id/resend-delivery', function () {
  this.timeout(300_000);
  let r: Running;
  let smtp: SmtpSink;

  before(async () => {
    smtp = await new SmtpSink().start();
    r = await startPipeline({
      registerMs: 300,
      pollAttempts: 40,
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'DTE <dte@test.local>', DELIVERY_INTERVAL_SEC: '0' },
    });
  });
  after(async () => {
    await r?.stop();
    await smtp?.close();
  });

  const sender = (smtpUrl: string, clock?: () => Date) =>
    new ReceptorDelivery({
      dataSource: r.t.db.dataSource,
      keys: r.t.deps.keys,
      smtpUrl,
      mailFrom: 'DTE <dte@test.local>',
      ...(clock ? { clock } : {}),
      settings: { backoffMs: 60_000 },
    });

  async function lastMailTo(address: string): Promise<ParsedMail> {
    const m = [...smtp.mails].reverse().find((x) => x.to.includes(address));
    expect(m, `a mail to ${address}`).to.not.equal(undefined);
    return simpleParser(m!.raw);
  }

  async function expectIntercambio(mail: ParsedMail, dteId: string) {
    const xml = mail.attachments.find((a) => a.filename?.endsWith('.xml'));
    const pdf = mail.attachments.find((a) => a.contentType === 'application/pdf');
    expect(xml && pdf, 'XML and PDF attached').to.not.equal(undefined);
    const v = verifyEnvioDte(xml!.content);
    expect(v.caratula.rutReceptor).to.equal('77777777-7');
    expect(v.caratula.rutEmisor).to.equal(r.o.rut);
    expect(v.envelopeSignature.valid, v.envelopeSignature.error).to.equal(true);
    const stored: { signed_xml: string }[] = await r.t.db.dataSource.query(
      'SELECT signed_xml FROM dtes WHERE id = $1',
      [dteId],
    );
    expect(xml!.content.toString('latin1')).to.include(stored[0].signed_xml);
    const ted = /<TED[\s>][\s\S]*?<\/TED>/.exec(stored[0].signed_xml)![0];
    const codes = decodePdf417(pdf!.content);
    expect(codes).to.have.length(1);
    expect(codes[0].toString('latin1')).to.equal(ted);
  }

  it('once the SII accepts, the receptor gets the EnvioDTE addressed to it and the PDF; recorded once', async () => {
    const res = await emit(r.t, r.o, { ...body(33, r.o.rut), correo_receptor: ['compras@cliente.test'] });
    expect(res.status).to.equal(202);
    const id = res.body.id as string;
    // before the verdict nothing leaves
    const early = await sender(smtp.url).sweep();
    expect(early.filter((o) => o.dteId === id)).to.have.length(0);
    await follow(r, id);
    const out = await sender(smtp.url).sweep();
    expect(out.filter((o) => o.dteId === id).map((o) => o.state)).to.deep.equal(['sent']);
    await expectIntercambio(await lastMailTo('compras@cliente.test'), id);
    const again = await sender(smtp.url).sweep();
    expect(again.filter((o) => o.dteId === id)).to.have.length(0);
    const rows: { reason: string; state: string; attempts: number; message_id: string }[] =
      await r.t.db.dataSource.query(
        'SELECT reason, state, attempts, message_id FROM dte_deliveries WHERE dte_id = $1',
        [id],
      );
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ reason: 'emission', state: 'sent', attempts: 1 });
    expect(rows[0].message_id).to.match(/@/);
  });

  it('a mail server that refuses is recorded (attempts, last_error) and retried after the backoff', async () => {
    const res = await emit(r.t, r.o, { ...body(34, r.o.rut), correo_receptor: ['pagos@cliente.test'] });
    const id = res.body.id as string;
    await follow(r, id);
    const dead = `smtp://127.0.0.1:${await freePort()}`;
    const failed = await sender(dead).sweep();
    expect(failed.filter((o) => o.dteId === id).map((o) => o.state)).to.deep.equal(['pending']);
    const row: { attempts: number; last_error: string; next_attempt_at: Date }[] =
      await r.t.db.dataSource.query(
        `SELECT attempts, last_error, next_attempt_at FROM dte_deliveries WHERE dte_id = $1`,
        [id],
      );
    expect(row[0].attempts).to.equal(1);
    expect(row[0].last_error).to.match(/ECONNREFUSED|connect/i);
    // not due yet: a sweep with a working server now sends nothing for it
    const notYet = await sender(smtp.url).sweep();
    expect(notYet.filter((o) => o.dteId === id)).to.have.length(0);
    const later = () => new Date(new Date(row[0].next_attempt_at).getTime() + 1000);
    const retried = await sender(smtp.url, later).sweep();
    expect(retried.filter((o) => o.dteId === id).map((o) => o.state)).to.deep.equal(['sent']);
    await expectIntercambio(await lastMailTo('pagos@cliente.test'), id);
  });

  it('POST /dtes/:id/resend-delivery sends it again now (to the given or the emission addresses); no address answers no_email', async () => {
    const withMail = await emit(r.t, r.o, { ...body(61, r.o.rut), correo_receptor: ['nc@cliente.test'] });
    const without = await emit(r.t, r.o, body(56, r.o.rut));
    await follow(r, withMail.body.id as string);
    await follow(r, without.body.id as string);
    const before = smtp.mails.length;
    const res = await call(r.t.url, 'POST', `/dtes/${withMail.body.id}/resend-delivery`, { key: r.o.key });
    expect(res.status, res.text).to.equal(200);
    expect((res.body.data as { state: string; correo_receptor: string[] }).state).to.equal('sent');
    expect(smtp.mails.length).to.equal(before + 1);
    await expectIntercambio(await lastMailTo('nc@cliente.test'), withMail.body.id as string);
    const other = await call(r.t.url, 'POST', `/dtes/${withMail.body.id}/resend-delivery`, {
      key: r.o.key,
      json: { correo_receptor: ['contabilidad@cliente.test'] },
    });
    expect(other.status).to.equal(200);
    await lastMailTo('contabilidad@cliente.test');
    const none = await call(r.t.url, 'POST', `/dtes/${without.body.id}/resend-delivery`, { key: r.o.key });
    expect(none.status).to.equal(422);
    expect(none.body.code).to.equal('dte.resend_delivery.no_email');
    expect(none.body.next_action).to.equal('provide_correo_receptor');
    const bad = await call(r.t.url, 'POST', `/dtes/${without.body.id}/resend-delivery`, {
      key: r.o.key,
      json: { correo_receptor: ['not-an-address'] },
    });
    // the spec: a bad resend e-mail is 422 validation_error with errors[] (path, message)
    expect(bad.status).to.equal(422);
    expect(bad.body.code).to.equal('validation_error');
    const errors = bad.body.errors as { path: string; message: string }[];
    expect(errors).to.be.an('array').with.length.greaterThan(0);
    expect(errors[0]!.path).to.include('correo_receptor');
    const extra = await call(r.t.url, 'POST', `/dtes/${without.body.id}/resend-delivery`, {
      key: r.o.key,
      json: { correo_receptor: ['a@b.test'], cc: 'x' },
    });
    expect(extra.status).to.equal(422);
    expect(extra.body.code).to.equal('validation_error');
    // a document whose signed XML is not stored (yet): 409 dte.pdf.not_signed with xml_url in the body
    const unsigned = await emit(r.t, r.o, { ...body(56, r.o.rut), correo_receptor: ['x@cliente.test'] });
    await follow(r, unsigned.body.id as string);
    await r.t.db.dataSource.query('UPDATE dtes SET signed_xml = NULL WHERE id = $1', [unsigned.body.id]);
    const notSigned = await call(r.t.url, 'POST', `/dtes/${unsigned.body.id}/resend-delivery`, {
      key: r.o.key,
    });
    expect(notSigned.status).to.equal(409);
    expect(notSigned.body.code).to.equal('dte.pdf.not_signed');
    expect(notSigned.body.xml_url).to.equal(`/api/v1/dtes/${unsigned.body.id}/xml`);
    const stranger = await orgWithCafs(r.t, { tipos: [33] });
    const foreign = await call(r.t.url, 'POST', `/dtes/${withMail.body.id}/resend-delivery`, {
      key: stranger.key,
    });
    expect(foreign.status).to.equal(404);
  });
});

describe('POST /dtes/:id/resend-delivery without a mail server', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it('answers 501 dte.resend_delivery.not_wired', async () => {
    const o = await orgWithCafs(t, { tipos: [33] });
    const res = await emit(t, o, { ...body(33, o.rut), correo_receptor: ['a@b.test'] });
    const out = await call(t.url, 'POST', `/dtes/${res.body.id}/resend-delivery`, { key: o.key });
    expect(out.status).to.equal(501);
    expect(out.body.code).to.equal('dte.resend_delivery.not_wired');
  });
});
