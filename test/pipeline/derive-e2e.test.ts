/**
 * Issue 11 end to end: a factura issued through POST /dtes reaches EPR at the SII simulator; its
 * credit note derived with POST /dtes/:id/derive (action anular) goes through the same pipeline
 * (relay, signer, uploader, poller, projector) to EPR, and its signed XML references the
 * original (TpoDocRef 33, FolioRef, CodRef 1); GET /dtes/totales of the period then matches what
 * was issued and where it stands.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { body, emit, uploadCaf } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import { eventually, simAdmin, startPipeline, type Pipeline } from './harness';

interface SimUpload {
  trackId: string;
  documents: { tipoDte: number; folio: number; result: string }[];
}

describe('derive end to end: a credit note annulling an invoice reaches EPR and references it', function () {
  this.timeout(240_000);
  let p: Pipeline;

  before(async () => {
    p = await startPipeline();
    // the pipeline's company has CAFs of 33 and 34; the credit note needs one of 61
    await uploadCaf(p.t, p.o.key, p.o.rut, { tipo: 61, hasta: 20 });
  });
  after(async () => p?.close());

  const until = (id: string, status: string) =>
    eventually(`${id} at ${status}`, async () => {
      const r = await call(p.t.url, 'GET', `/dtes/${id}`, { key: p.o.key });
      return r.body.sii_status === status ? r.body : undefined;
    });

  it('issues a 33, derives anular, and the 61 reaches EPR with a Referencia to the 33; totales match', async () => {
    const inv = await emit(p.t, p.o, body(33, p.o.rut, 25000));
    expect(inv.status, inv.text).to.equal(202);
    await until(inv.body.id as string, 'EPR');

    const nc = await call(p.t.url, 'POST', `/dtes/${inv.body.id}/derive`, {
      key: p.o.key,
      json: { action: 'anular', razon_ref: 'Anula factura por error en pedido' },
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': p.o.certId },
    });
    expect(nc.status, nc.text).to.equal(202);
    expect(nc.body).to.include({
      tipo_dte: 61,
      monto_total: inv.body.monto_total,
      derived_from: inv.body.id,
    });
    const done = await until(nc.body.id as string, 'EPR');
    expect(done.estado).to.include({ terminal: true, categoria: 'aceptado' });

    // the signed XML the SII accepted references the invoice
    const xml = await call(p.t.url, 'GET', `/dtes/${nc.body.id}/xml`, { key: p.o.key });
    expect(xml.status).to.equal(200);
    const doc = new DOMParser().parseFromString(xml.text, 'text/xml');
    const text = (el: Element, name: string) => el.getElementsByTagName(name)[0]?.textContent;
    const idDoc = doc.getElementsByTagName('IdDoc')[0];
    expect(text(idDoc, 'TipoDTE')).to.equal('61');
    expect(text(idDoc, 'Folio')).to.equal(String(nc.body.folio));
    const refs = doc.getElementsByTagName('Referencia');
    expect(refs.length).to.equal(1);
    expect(text(refs[0], 'TpoDocRef')).to.equal('33');
    expect(text(refs[0], 'FolioRef')).to.equal(String(inv.body.folio));
    expect(text(refs[0], 'FchRef')).to.equal(inv.body.fecha_emision);
    expect(text(refs[0], 'CodRef')).to.equal('1');
    expect(text(refs[0], 'RazonRef')).to.equal('Anula factura por error en pedido');
    expect(text(doc.getElementsByTagName('Totales')[0], 'MntTotal')).to.equal(String(inv.body.monto_total));

    // the simulator received and accepted the credit note
    const uploads = await simAdmin<SimUpload[]>(p.t, 'GET', '/admin/cert/uploads');
    const received = uploads.flatMap((u) => u.documents).filter((d) => d.tipoDte === 61);
    expect(received.map((d) => d.folio)).to.deep.equal([nc.body.folio]);

    // a second annulment of the same invoice needs override_nota_previa (nothing issued)
    const again = await call(p.t.url, 'POST', `/dtes/${inv.body.id}/derive`, {
      key: p.o.key,
      json: { action: 'anular' },
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': p.o.certId },
    });
    expect(again.status).to.equal(409);
    expect(again.body).to.include({ code: 'nota_previa_override_required', cobertura: 'completa' });

    const tot = await call(
      p.t.url,
      'GET',
      `/dtes/totales?periodo=${String(inv.body.fecha_emision).slice(0, 7)}`,
      {
        key: p.o.key,
      },
    );
    expect(tot.status, tot.text).to.equal(200);
    const m = inv.body as Record<string, number>;
    const line = {
      monto_neto: m.monto_neto,
      monto_exento: m.monto_exento,
      iva: m.iva,
      monto_total: m.monto_total,
    };
    expect(tot.body.por_tipo).to.deep.equal([
      { tipo_dte: 33, cantidad: 1, ...line },
      { tipo_dte: 61, cantidad: 1, ...line },
    ]);
    expect(tot.body.por_estado).to.deep.equal([
      {
        sii_status: 'EPR',
        cantidad: 2,
        monto_neto: 2 * m.monto_neto,
        monto_exento: 2 * m.monto_exento,
        iva: 2 * m.iva,
        monto_total: 2 * m.monto_total,
      },
    ]);
  });
});
