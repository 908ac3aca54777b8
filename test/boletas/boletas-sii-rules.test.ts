/**
 * Boletas as the SII treats them (issue 29, docs/boletas-bhe.md), over the whole pipeline and the
 * SII simulator's boleta REST channel: the SII's per-boleta findings (error[]) kept and shown;
 * RCO, RPT and VOF final (not stuck); the issue-date window; the XML download's charset names
 * its bytes (an accented item name and the signature survive a client that decodes by the
 * header); the `path` of batch validation errors.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { santiagoDate } from '@dte/engine';
import { standaloneDte, xmlsecVerify } from '../../packages/dte-engine/test/support/oracles';
import { today, type DteOrg } from '../../services/api/test/dtes-fixtures';
import { call, type Answer, type TestApi } from '../../services/api/test/support/test-api';
import { enrol, eventually, simAdmin, startPipeline, type Pipeline } from '../pipeline/harness';
import { tedOf } from '@dte/printed-form';
import { decodePdf417, pdfInfo, pdfText } from '../../packages/printed-form/test/support/pdf-oracles';

function boleta(rut: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    tipo_dte: 39,
    rut_emisor: rut,
    fecha_emision: today(),
    items: [
      { nombre: 'Café con leche', cantidad: 2, precio_unitario: 1500, exento: false, monto_item: 3000 },
    ],
    ...over,
  };
}

function post(
  t: TestApi,
  o: DteOrg,
  p: string,
  json: unknown,
  idem: string | null = randomUUID(),
): Promise<Answer> {
  const headers: Record<string, string> = { 'X-Cert-Id': o.certId };
  if (idem) headers['Idempotency-Key'] = idem;
  return call(t.url, 'POST', p, { key: o.key, json, headers });
}

describe('boletas as the SII treats them: findings, final send rejections, date window, charset, batch paths', function () {
  this.timeout(300_000);
  let p: Pipeline;
  const t = () => p.t;
  const o = () => p.o;
  const db = () => p.t.db.dataSource;

  before(async () => {
    p = await startPipeline({ env: { BOLETAS_ENABLED: 'cert' }, tipos: [39, 41], hasta: 50 });
    await enrol(p.t, p.o);
  });
  after(() => p?.close());

  const detail = (id: string) => call(t().url, 'GET', `/boletas/${id}`, { key: o().key });
  const settled = (id: string, codes: string[]) =>
    eventually(`boleta ${id} in ${codes.join('/')}`, async () => {
      const d = await detail(id);
      return codes.includes(String(d.body.sii_status)) ? d.body : undefined;
    });

  it("shows the SII's findings on a rejected boleta (section, line, level, code, description, detail)", async () => {
    await simAdmin(t(), 'POST', '/admin/triggers', { kind: 'verdict', verdict: 'RCH', env: 'cert' });
    const res = await post(t(), o(), '/boletas', boleta(o().rut));
    expect(res.status, res.text).to.equal(202);
    const d = await settled(res.body.id as string, ['RCH']);
    expect(d.sii_errores).to.deep.equal([
      {
        seccion: 'DTE',
        linea: 0,
        nivel: 3,
        codigo: 1,
        descripcion: 'rechazo forzado por trigger',
        detalle: '',
      },
    ]);
    expect(d.sii_glosa).to.equal('Dte Rechazado: (DTE L[0] -3-1) rechazo forzado por trigger');
    expect(d.estado).to.include({ terminal: true, categoria: 'rechazado', accion: 'reemitir' });
    // a boleta accepted clean has none
    const ok = await post(t(), o(), '/boletas', boleta(o().rut));
    const accepted = await settled(ok.body.id as string, ['EPR']);
    expect(accepted.sii_errores).to.deep.equal([]);
  });

  for (const code of ['RCO', 'RPT', 'VOF']) {
    it(`takes ${code} as the final rejection of the whole send: never stuck, polling ends`, async () => {
      await simAdmin(t(), 'POST', '/admin/triggers', { kind: 'verdict', verdict: code, env: 'cert' });
      const res = await post(t(), o(), '/boletas', boleta(o().rut));
      const d = await settled(res.body.id as string, [code, 'stuck']);
      expect(d.sii_status).to.equal(code);
      expect(d.estado).to.include({ terminal: true, categoria: 'rechazado', poll_activo: false });
      const [poll] = await db().query(
        `SELECT state FROM sii_polls WHERE upload_id = (SELECT upload_id FROM dtes WHERE id = $1)`,
        [res.body.id],
      );
      expect(poll.state).to.equal('done');
    });
  }

  it('refuses a boleta dated out of its window (validation_failed at fecha_emision), using no folio', async () => {
    const folios = async () =>
      Number(
        (
          await db().query(`SELECT count(*) AS n FROM dtes WHERE company_id = $1 AND tipo_dte = 39`, [
            o().companyId,
          ])
        )[0].n,
      );
    const before = await folios();
    const now = Date.now();
    for (const fecha of [
      '2023-03-14',
      santiagoDate(new Date(now - 40 * 86_400_000)),
      santiagoDate(new Date(now + 86_400_000)),
    ]) {
      const r = await post(t(), o(), '/boletas', boleta(o().rut, { fecha_emision: fecha }));
      expect(r.status, `${fecha}: ${r.text}`).to.equal(400);
      expect(r.body.code).to.equal('validation_failed');
      expect((r.body.issues as { path: string }[])[0]!.path).to.equal('fecha_emision');
    }
    expect(await folios()).to.equal(before);
  });

  it('serves the signed XML in the charset it declares: the accented name and the signature survive', async () => {
    const res = await post(t(), o(), '/boletas', boleta(o().rut));
    const id = res.body.id as string;
    await settled(id, ['EPR']);
    const xml = await fetch(`${t().url}/boletas/${id}/xml`, {
      headers: { Authorization: `Bearer ${o().key}` },
    });
    const type = xml.headers.get('content-type') ?? '';
    const charset = /charset=([^;]+)/i.exec(type)?.[1];
    expect(charset, type).to.be.a('string');
    const text = new TextDecoder(charset!).decode(await xml.arrayBuffer());
    expect(text).to.contain('<NmbItem>Café con leche</NmbItem>');
    const verified = xmlsecVerify(standaloneDte(text));
    expect(verified.ok, verified.output).to.equal(true);
  });

  it('names the path of each invalid entry of a batch, as the spec asks', async () => {
    const r = await post(
      t(),
      o(),
      '/boletas/batch',
      {
        batch_idempotency_key: randomUUID(),
        boletas: [
          boleta(o().rut),
          boleta(o().rut, {
            items: [{ nombre: 'X', cantidad: 3, precio_unitario: 1000, exento: false, monto_item: 2999 }],
          }),
          boleta(o().rut, { fecha_emision: '2023-01-01' }),
          { ...boleta(o().rut), tipo_dte: 33 },
        ],
      },
      null,
    );
    expect(r.status, r.text).to.equal(422);
    expect(r.body.code).to.equal('validation_error');
    const errors = (
      r.body.detail as { errors: { index: number; code: string; path: string; message: string }[] }
    ).errors;
    expect(errors.map((e) => [e.index, e.code, e.path])).to.deep.equal([
      [1, 'amount_arithmetic', 'boletas[1].items[0].monto_item'],
      [2, 'validation_failed', 'boletas[2].fecha_emision'],
      [3, 'validation_failed', 'boletas[3].tipo_dte'],
    ]);
    for (const e of errors) expect(e.message).to.be.a('string').and.not.equal('');
  });

  it('prints a boleta as an 80 mm thermal ticket and on letter, with its timbre (PDF417 = the signed TED)', async () => {
    const res = await post(t(), o(), '/boletas', boleta(o().rut));
    const id = res.body.id as string;
    await settled(id, ['EPR']);
    const [{ signed_xml: xml }] = await db().query('SELECT signed_xml FROM dtes WHERE id = $1', [id]);
    const ted = Buffer.from(tedOf(xml as string), 'latin1');
    for (const layout of ['thermal', 'letter']) {
      const r = await fetch(`${t().url}/boletas/${id}/pdf${layout === 'letter' ? '?layout=letter' : ''}`, {
        headers: { Authorization: `Bearer ${o().key}` },
      });
      expect(r.status, layout).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('application/pdf');
      const pdf = Buffer.from(await r.arrayBuffer());
      const codes = decodePdf417(pdf);
      expect(codes, layout).to.have.length(1);
      expect(codes[0]!.equals(ted), `${layout}: the PDF417 holds the TED byte for byte`).to.equal(true);
      const text = pdfText(pdf).replace(/\s+/g, ' ');
      expect(text).to.include('BOLETA ELECTRÓNICA').and.include(`N° ${res.body.folio}`);
      expect(text).to.include('Café con leche').and.include('Timbre Electrónico SII');
      expect(text.replace(/\s/g, '')).to.include('TOTAL$3.000');
      const width = pdfInfo(pdf).width;
      if (layout === 'thermal') expect(width).to.be.closeTo((80 / 25.4) * 72, 1);
      else expect(width).to.be.closeTo(612, 1);
    }
    const bad = await call(t().url, 'GET', `/boletas/${id}/pdf?layout=a4`, { key: o().key });
    expect([bad.status, bad.body.code]).to.deep.equal([400, 'validation_failed']);
  });
});
