/**
 * Issue 18 item 4 for boletas too: the Idempotency-Key belongs to one company. Two companies of
 * one organization sending the same key each get their own boleta (their own folio 1), and a
 * repeat of each returns that company's boleta, never the other's. Requests with one key at the
 * same moment make one boleta and use one folio.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { santiagoDate } from '@dte/engine';
import {
  boletaBody,
  orgWithCafs,
  otherCompanyOf,
  uploadCaf,
  type DteOrg,
} from '../../services/api/test/dtes-fixtures';
import { call, startTestApi, type TestApi } from '../../services/api/test/support/test-api';
import { enrol } from '../pipeline/harness';

describe('boletas and BHE: the idempotency keys are per company (issues 18 and 28)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let a: DteOrg;
  let b: DteOrg;

  before(async () => {
    t = await startTestApi({ env: { BOLETAS_ENABLED: 'cert', BHE_ENABLED: 'true' } });
    a = await orgWithCafs(t, { tipos: [39], hasta: 5 });
    b = await otherCompanyOf(t, a, {
      giro: 'Venta al por menor',
      direccion: 'Av. Providencia 1234',
      comuna: 'Providencia',
      actividadEconomica: 471100,
    });
    await uploadCaf(t, b.key, b.rut, { razonSocial: 'OTRA TIENDA', tipo: 39, hasta: 5 });
  });
  after(async () => t?.close());

  const boleta = (o: DteOrg, idem: string, precio: number) =>
    call(t.url, 'POST', '/boletas', {
      key: o.key,
      headers: { 'Idempotency-Key': idem, 'X-Cert-Id': o.certId },
      json: boletaBody(o.rut, precio),
    });

  /** company a's next boleta folio, read apart from the api */
  const nextFolioOfA = async (): Promise<number> =>
    Number(
      (
        await t.db.dataSource.query(
          'SELECT next_folio FROM cafs WHERE company_id = $1 AND tipo_dte = 39 AND deleted_at IS NULL',
          [a.companyId],
        )
      )[0].next_folio,
    );

  it('two companies with one key get two boletas; each repeat returns its own', async () => {
    const idem = `shared-${randomUUID()}`;
    const first = await boleta(a, idem, 1190);
    expect(first.status, first.text).to.equal(202);
    const second = await boleta(b, idem, 2380);
    expect(second.status, second.text).to.equal(202);
    expect(second.body.id).to.not.equal(first.body.id);
    expect(second.body.rut_emisor).to.equal(b.rut);
    expect(second.body.folio).to.equal(1);
    expect(second.body.monto_total).to.equal(2380);

    const againA = await boleta(a, idem, 1190);
    expect([againA.status, againA.body.id]).to.deep.equal([202, first.body.id]);
    const againB = await boleta(b, idem, 2380);
    expect([againB.status, againB.body.id]).to.deep.equal([202, second.body.id]);
    // another body under a company's key is that company's conflict, naming its own boleta
    const conflict = await boleta(b, idem, 4760);
    expect(conflict.status).to.equal(409);
    expect(conflict.body.code).to.equal('idempotency_conflict');
    expect((conflict.body.detail as { existingDteId: string }).existingDteId).to.equal(second.body.id);
  });

  it("signs with its own company's certificates only: another company's answers cert_not_found, no folio used", async () => {
    const before = await nextFolioOfA();
    const json = boletaBody(a.rut, 990);
    const res = await call(t.url, 'POST', '/boletas', {
      key: a.key,
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': b.certId },
      json,
    });
    expect(res.status, res.text).to.equal(404);
    expect(res.body.code).to.equal('cert_not_found');
    const batch = await call(t.url, 'POST', '/boletas/batch', {
      key: a.key,
      headers: { 'X-Cert-Id': b.certId },
      json: { batch_idempotency_key: randomUUID(), boletas: [json] },
    });
    expect(batch.status, batch.text).to.equal(404);
    expect(batch.body.code).to.equal('cert_not_found');
    expect(await nextFolioOfA()).to.equal(before);
  });

  it('ten requests with one key at once make one boleta with one folio; those of another body under it are a conflict', async () => {
    const before = await nextFolioOfA();
    const idem = `race-${randomUUID()}`;
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => boleta(a, idem, 1190)),
      ...Array.from({ length: 2 }, () => boleta(a, idem, 2380)),
    ]);
    const same = answers.slice(0, 8);
    const other = answers.slice(8);
    // the winner is one of the first body or of the other: its body's requests get it (202), the
    // other body's requests 409 idempotency_conflict naming it
    const ids = new Set(answers.filter((r) => r.status === 202).map((r) => r.body.id as string));
    expect(ids.size, answers.map((r) => `${r.status} ${r.text}`).join('\n')).to.equal(1);
    const [id] = [...ids];
    const winners = same.every((r) => r.status === 202) ? same : other;
    const losers = winners === same ? other : same;
    expect(winners.map((r) => r.status)).to.deep.equal(winners.map(() => 202));
    for (const r of losers) {
      expect(r.status, r.text).to.equal(409);
      expect(r.body.code).to.equal('idempotency_conflict');
      expect((r.body.detail as { existingDteId: string }).existingDteId).to.equal(id);
    }
    const rows: { id: string; folio: number }[] = await t.db.dataSource.query(
      'SELECT id, folio FROM dtes WHERE company_id = $1 AND idempotency_key = $2',
      [a.companyId, idem],
    );
    expect(rows.map((r) => r.id)).to.deep.equal([id]);
    expect(Number(rows[0]!.folio)).to.equal(before);
    expect(await nextFolioOfA()).to.equal(before + 1);
  });

  it('two companies with one batch_idempotency_key get two batches; each repeat returns its own (issue 28)', async () => {
    const key = `batch-shared-${randomUUID()}`;
    const batch = (o: DteOrg, precio: number) =>
      call(t.url, 'POST', '/boletas/batch', {
        key: o.key,
        headers: { 'X-Cert-Id': o.certId },
        json: { batch_idempotency_key: key, boletas: [boletaBody(o.rut, precio)] },
      });
    const ofA = await batch(a, 1190);
    expect(ofA.status, ofA.text).to.equal(202);
    const ofB = await batch(b, 2380);
    expect(ofB.status, ofB.text).to.equal(202);
    expect(ofB.body.batchId).to.not.equal(ofA.body.batchId);
    expect((await batch(a, 1190)).body).to.deep.equal(ofA.body);
    expect((await batch(b, 2380)).body).to.deep.equal(ofB.body);
    const [row] = await t.db.dataSource.query('SELECT company_id FROM boleta_batches WHERE id = $1', [
      ofB.body.batchId,
    ]);
    expect(row.company_id).to.equal(b.companyId);
    // b's status read sees its own batch, not a's
    const foreign = await call(t.url, 'GET', `/boletas/batch/${ofA.body.batchId}`, { key: b.key });
    expect(foreign.status).to.equal(404);
  });

  it('two companies with one Idempotency-Key each issue their own BHE (issue 28)', async () => {
    for (const o of [a, b]) await enrol(t, o);
    const idem = `bhe-shared-${randomUUID()}`;
    const bhe = (o: DteOrg, monto: number) =>
      call(t.url, 'POST', '/bhe', {
        key: o.key,
        headers: { 'Idempotency-Key': idem, 'X-Cert-Id': o.certId },
        json: {
          rut_receptor: '76086428-5',
          fecha_emision: santiagoDate(new Date()),
          descripcion: 'Asesoría',
          monto_bruto: monto,
        },
      });
    const ofA = await bhe(a, 100000);
    expect(ofA.status, ofA.text).to.equal(202);
    const ofB = await bhe(b, 200000);
    expect(ofB.status, ofB.text).to.equal(202);
    expect(ofB.body.id).to.not.equal(ofA.body.id);
    expect(ofB.body.rut_emisor).to.equal(b.rut);
    expect((await bhe(a, 100000)).body.id).to.equal(ofA.body.id);
    const conflict = await bhe(b, 300000);
    expect(conflict.status).to.equal(409);
    expect((conflict.body.detail as { existingDteId: string }).existingDteId).to.equal(ofB.body.id);
  });
});
