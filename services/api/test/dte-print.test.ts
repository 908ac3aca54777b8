/**
 * The printed form over HTTP on the real pipeline (api, relay, projector, signer, uploader,
 * poller, SII simulator, Kafka, registry, PostgreSQL, Redis): documents issued with POST /dtes
 * until signed, then GET /dtes/:id/pdf rendered by poppler at 300 dpi and the PDF417 read by
 * zxing-cpp must give the TED of the stored XML byte for byte; pdftotext finds folio, RUTs and
 * totals. Preview, muestras (ZIP and mail through a local SMTP receiver) ride on the same stack.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { decodePdf417, pdfInfo, pdfText } from '../../../packages/printed-form/test/support/pdf-oracles';
import { SmtpSink } from '../../webhooks/test/support/smtp';
import { body, emit, expectSchema, nextFolio, orgWithCafs, today } from './dtes-fixtures';
import { follow, startPipeline, type Running } from './support/pipeline';
import { call, startTestApi, type TestApi } from './support/test-api';

interface Fetched {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: Record<string, unknown> | undefined;
}

/** One request whose answer may be binary (PDF, ZIP). */
async function fetchBytes(
  base: string,
  method: string,
  p: string,
  key: string,
  opts: { json?: unknown; headers?: Record<string, string> } = {},
): Promise<Fetched> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, ...opts.headers };
  if (opts.json !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${p}`, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: Record<string, unknown> | undefined;
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(bytes.toString('utf8'));
  return { status: res.status, headers: res.headers, bytes, json };
}

/** The entries of a ZIP, read by python's zipfile (an independent reader). */
function unzip(zip: Buffer): Map<string, Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zip-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.zip'), zip);
    const out = execFileSync(
      fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3',
      [
        '-c',
        'import base64,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nfor n in z.namelist(): print(n, base64.b64encode(z.read(n)).decode())',
        path.join(dir, 'a.zip'),
      ],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    return new Map(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [n, b] = l.split(' ');
          return [n, Buffer.from(b, 'base64')];
        }),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const tedOfXml = (xml: Buffer) => {
  const s = xml.toString('latin1');
  return Buffer.from(/<TED[\s>][\s\S]*?<\/TED>/.exec(s)![0], 'latin1');
};
const squeeze = (s: string) => s.replace(/\s+/g, '');
const clp = (n: number) => n.toLocaleString('de-DE');
const rutDots = (rut: string) => {
  const [b, dv] = rut.split('-');
  return `${b.replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${dv}`;
};

describe('printed form over HTTP: GET /dtes/:id/pdf, preview, muestras', function () {
  this.timeout(300_000);
  let r: Running;
  let smtp: SmtpSink;
  const signed = new Map<number, { id: string; folio: number; montoTotal: number }>();

  before(async () => {
    smtp = await new SmtpSink().start();
    r = await startPipeline({
      registerMs: 300,
      pollAttempts: 40,
      env: { SMTP_URL: smtp.url, MUESTRAS_MAIL_TO: 'muestras@sii.test', MAIL_FROM: 'DTE <dte@test.local>' },
    });
    await r.t.db.dataSource.query(`UPDATE companies SET sii_oficina = 'Santiago Oriente' WHERE id = $1`, [
      r.o.companyId,
    ]);
    for (const tipo of [33, 34, 46, 52, 56, 61, 110, 112]) {
      const res = await emit(r.t, r.o, body(tipo, r.o.rut));
      expect(res.status, res.text).to.equal(202);
      signed.set(tipo, {
        id: res.body.id as string,
        folio: res.body.folio as number,
        montoTotal: res.body.monto_total as number,
      });
    }
    for (const d of signed.values()) await follow(r, d.id);
  });
  after(async () => {
    await r?.stop();
    await smtp?.close();
  });

  it('every emitted type: application/pdf whose PDF417 is the TED of the stored XML byte for byte; folio, RUTs, total, SII office and resolution printed', async () => {
    // requests first, slow decoding checks after (an idle keep-alive socket is not reused late)
    const fetched = new Map<number, { pdf: Fetched; xml: Fetched }>();
    for (const [tipo, d] of signed)
      fetched.set(tipo, {
        pdf: await fetchBytes(r.t.url, 'GET', `/dtes/${d.id}/pdf`, r.o.key),
        xml: await fetchBytes(r.t.url, 'GET', `/dtes/${d.id}/xml`, r.o.key),
      });
    for (const [tipo, d] of signed) {
      const { pdf, xml } = fetched.get(tipo)!;
      expect(pdf.status, `${tipo}: ${pdf.bytes.toString().slice(0, 300)}`).to.equal(200);
      expect(pdf.headers.get('content-type')).to.equal('application/pdf');
      expect(pdf.headers.get('x-request-id')).to.match(/.+/);
      expect(xml.status).to.equal(200);
      const stored: { signed_xml: string }[] = await r.t.db.dataSource.query(
        'SELECT signed_xml FROM dtes WHERE id = $1',
        [d.id],
      );
      const ted = tedOfXml(Buffer.from(stored[0].signed_xml, 'latin1'));
      expect(tedOfXml(xml.bytes).toString('latin1')).to.equal(ted.toString('latin1'));
      const codes = decodePdf417(pdf.bytes);
      expect(codes, `${tipo}: one PDF417`).to.have.length(1);
      expect(codes[0].toString('latin1'), `${tipo}`).to.equal(ted.toString('latin1'));
      const text = pdfText(pdf.bytes);
      expect(text, `${tipo}`).to.include(`N° ${d.folio}`);
      expect(text).to.include(`R.U.T.: ${rutDots(r.o.rut)}`);
      if (tipo !== 110 && tipo !== 112) expect(text).to.include('77.777.777-7');
      expect(text).to.include('S.I.I. - SANTIAGO ORIENTE');
      expect(text).to.include(`Res. N° 0 de ${today().slice(0, 4)}`);
      expect(text).to.include('Timbre Electrónico SII');
      expect(text).to.include('Verifique documento: www.sii.cl');
      expect(squeeze(text), `${tipo} total ${d.montoTotal}`).to.include(squeeze(clp(d.montoTotal)));
      if (tipo === 110 || tipo === 112) {
        expect(text).to.include('DOLAR USA');
        expect(squeeze(text)).to.include(squeeze('TOTAL CLP $ 19.475'));
      }
    }
  });

  it('a repeat comes from the cache (X-Cache: hit) with the same bytes', async () => {
    const d = signed.get(33)!;
    const a = await fetchBytes(r.t.url, 'GET', `/dtes/${d.id}/pdf?layout=thermal`, r.o.key);
    const b = await fetchBytes(r.t.url, 'GET', `/dtes/${d.id}/pdf?layout=thermal`, r.o.key);
    expect(a.status).to.equal(200);
    expect(b.headers.get('x-cache')).to.equal('hit');
    expect(b.bytes.equals(a.bytes)).to.equal(true);
    expect(pdfInfo(a.bytes).width).to.be.closeTo((80 / 25.4) * 72, 0.5);
  });

  it('copy=cedible: CEDIBLE (33, 34, 46) and CEDIBLE CON SU FACTURA (52) with the acuse de recibo; a 61 has none (validation_failed)', async () => {
    // requests first, slow rendering checks after (an idle keep-alive socket is not reused late)
    const copies = new Map<number, Fetched>();
    for (const tipo of [33, 34, 46, 52]) {
      copies.set(
        tipo,
        await fetchBytes(r.t.url, 'GET', `/dtes/${signed.get(tipo)!.id}/pdf?copy=cedible`, r.o.key),
      );
    }
    const nc = await call(r.t.url, 'GET', `/dtes/${signed.get(61)!.id}/pdf?copy=cedible`, { key: r.o.key });
    const bad = await call(r.t.url, 'GET', `/dtes/${signed.get(33)!.id}/pdf?layout=a4`, { key: r.o.key });
    expect(nc.status).to.equal(400);
    expect(nc.body.code).to.equal('validation_failed');
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('validation_failed');
    for (const [tipo, res] of copies) {
      expect(res.status).to.equal(200);
      const text = pdfText(res.bytes);
      expect(text).to.include(tipo === 52 ? 'CEDIBLE CON SU FACTURA' : 'CEDIBLE');
      expect(text).to.include('ACUSE DE RECIBO');
      expect(squeeze(text)).to.include('Ley19.983');
      expect(decodePdf417(res.bytes)).to.have.length(1);
    }
  });

  it('a signed document of 41 items (the schema allows 60) answers 422 dte.print.items_limit instead of a PDF', async () => {
    const many = body(33, r.o.rut, 1000);
    many.items = Array.from({ length: 41 }, (_, i) => ({
      nombre: `Artículo ${i + 1}`,
      cantidad: 1,
      precio_unitario: 1000,
      exento: false,
      monto_item: 1000,
    }));
    const res = await emit(r.t, r.o, many);
    expect(res.status, res.text).to.equal(202);
    await follow(r, res.body.id as string);
    const pdf = await call(r.t.url, 'GET', `/dtes/${res.body.id}/pdf`, { key: r.o.key });
    expect(pdf.status).to.equal(422);
    expect(pdf.body.code).to.equal('dte.print.items_limit');
    expect(pdf.body.next_action).to.equal('divide items into two documents');
    expect(pdf.body.detail).to.deep.equal({ count: 41, max: 40 });
  });

  it('an unknown document and another organization’s document answer 404 not_found', async () => {
    const other = await orgWithCafs(r.t, { tipos: [33] });
    const mine = signed.get(33)!.id;
    const foreign = await call(r.t.url, 'GET', `/dtes/${mine}/pdf`, { key: other.key });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.code).to.equal('not_found');
    const unknown = await call(r.t.url, 'GET', `/dtes/9b2f3c1e-0000-4000-8000-000000000000/pdf`, {
      key: r.o.key,
    });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('not_found');
  });

  it('POST /dtes/preview: a draft PDF marked BORRADOR with the totals emission gives, no folio used, nothing stored; JSON on Accept', async () => {
    const count = async () =>
      Number(
        (
          await r.t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes WHERE organization_id = $1', [
            r.o.orgId,
          ])
        )[0].n,
      );
    const before = await count();
    const folioBefore = await nextFolio(r.t, r.o, 33);
    const draftBody = body(33, r.o.rut, 12345);
    const pdf = await fetchBytes(r.t.url, 'POST', '/dtes/preview', r.o.key, { json: draftBody });
    expect(pdf.status, pdf.bytes.toString().slice(0, 300)).to.equal(200);
    expect(pdf.headers.get('content-type')).to.equal('application/pdf');
    const text = pdfText(pdf.bytes);
    expect(text).to.include('BORRADOR — SIN VALIDEZ TRIBUTARIA');
    expect(decodePdf417(pdf.bytes)).to.have.length(0);
    const json = await call(r.t.url, 'POST', '/dtes/preview', {
      key: r.o.key,
      json: draftBody,
      headers: { Accept: 'application/json' },
    });
    expect(json.status).to.equal(200);
    expectSchema('dte-preview.schema.json', json.body);
    expect(await count()).to.equal(before);
    expect(await nextFolio(r.t, r.o, 33)).to.equal(folioBefore);
    // the same body issued: the same totals
    const issued = await emit(r.t, r.o, draftBody);
    expect(issued.status).to.equal(202);
    const totals = (json.body as { data: Record<string, number> }).data;
    for (const k of ['monto_neto', 'monto_exento', 'iva', 'monto_total']) {
      expect(totals[k], k).to.equal(issued.body[k]);
    }
    expect(squeeze(text)).to.include(squeeze(clp(totals.monto_total)));
  });

  it('POST /dtes/preview refuses types outside 33, 34, 46, 52, 56, 61 (dte.preview.unsupported_tipo) and invalid bodies with the emission codes', async () => {
    const exp = await call(r.t.url, 'POST', '/dtes/preview', { key: r.o.key, json: body(110, r.o.rut) });
    expect(exp.status).to.equal(422);
    expect(exp.body.code).to.equal('dte.preview.unsupported_tipo');
    expect(exp.body.next_action).to.equal('use_supported_tipo_dte');
    const empty = await call(r.t.url, 'POST', '/dtes/preview', {
      key: r.o.key,
      json: { ...body(33, r.o.rut), items: [] },
    });
    expect(empty.body.code).to.equal('items_empty');
    const many = body(33, r.o.rut);
    many.items = Array.from({ length: 41 }, () => (body(33, r.o.rut).items as unknown[])[0]);
    const limit = await call(r.t.url, 'POST', '/dtes/preview', { key: r.o.key, json: many });
    expect(limit.status).to.equal(422);
    expect(limit.body.code).to.equal('dte.print.items_limit');
  });

  it('GET /dtes/muestras: a ZIP with one PDF per signed certification 33/34/56/61, each timbre readable; source=set_pruebas filters', async () => {
    // the documents the tests above issued are signed by the running pipeline: the ZIP is compared
    // with the signed rows once none is still waiting for its signature (else one signed between
    // the ZIP and the query below would be in one and not the other)
    for (const until = Date.now() + 60_000; ;) {
      const [{ n }] = await r.t.db.dataSource.query(
        `SELECT count(*)::int AS n FROM dtes WHERE organization_id = $1 AND tipo_dte IN (33, 34, 56, 61)
            AND signed_xml IS NULL AND sii_status = 'queued'`,
        [r.o.orgId],
      );
      if (n === 0) break;
      if (Date.now() > until) throw new Error(`${n} documents still wait for their signature`);
      await new Promise((done) => setTimeout(done, 200));
    }
    const res = await fetchBytes(r.t.url, 'GET', '/dtes/muestras', r.o.key);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/zip');
    expect(res.headers.get('x-request-id')).to.be.a('string');
    const files = unzip(res.bytes);
    const signedRows: { tipo_dte: number; folio: string }[] = await r.t.db.dataSource.query(
      `SELECT tipo_dte, folio FROM dtes WHERE organization_id = $1 AND tipo_dte IN (33, 34, 56, 61)
          AND signed_xml IS NOT NULL ORDER BY tipo_dte, folio`,
      [r.o.orgId],
    );
    // the 41-item invoice of the test above cannot be printed: named in X-Muestras-Omitted
    const omitted = (res.headers.get('x-muestras-omitted') ?? '').split(', ').filter(Boolean);
    expect(omitted).to.have.length(1);
    expect(omitted[0]).to.match(/^33-\d+\.pdf:dte\.print\.items_limit$/);
    expect([...files.keys()]).to.deep.equal(
      signedRows.map((s) => `${s.tipo_dte}-${s.folio}.pdf`).filter((n) => n !== omitted[0].split(':')[0]),
    );
    for (const tipo of [33, 34, 56, 61]) {
      const d = signed.get(tipo)!;
      const pdf = files.get(`${tipo}-${d.folio}.pdf`)!;
      expect(pdfText(pdf)).to.include(`N° ${d.folio}`);
    }
    const empty = await call(r.t.url, 'GET', '/dtes/muestras?source=set_pruebas', { key: r.o.key });
    expect(empty.status).to.equal(422);
    expect(empty.body.code).to.equal('dte.muestras.empty');
    // a document of the SII's test set names its case in the reference (RazonRef CASO n-m)
    const caso = {
      ...body(33, r.o.rut),
      references: [
        { line_num: 1, tipo_doc_ref: 801, folio_ref: 1, fecha_ref: today(), razon_ref: 'CASO 4242-1' },
      ],
    };
    const issued = await emit(r.t, r.o, caso);
    expect(issued.status, issued.text).to.equal(202);
    await follow(r, issued.body.id as string);
    const set = await fetchBytes(r.t.url, 'GET', '/dtes/muestras?source=set_pruebas', r.o.key);
    expect(set.status).to.equal(200);
    const setFiles = unzip(set.bytes);
    expect([...setFiles.keys()]).to.deep.equal([`33-${issued.body.folio}.pdf`]);
    expect(pdfText(setFiles.get(`33-${issued.body.folio}.pdf`)!)).to.include('CASO 4242-1');
  });

  it('POST /dtes/muestras/send mails the sample PDFs to the SII mailbox through SMTP: {data: {sent, sentAt}}', async () => {
    const before = smtp.mails.length;
    const res = await call(r.t.url, 'POST', '/dtes/muestras/send', { key: r.o.key });
    expect(res.status, res.text).to.equal(200);
    expectSchema('dte-muestras-send.schema.json', res.body);
    const data = (res.body as { data: { sent: number; sentAt: string } }).data;
    const zip = unzip((await fetchBytes(r.t.url, 'GET', '/dtes/muestras', r.o.key)).bytes);
    expect(data.sent).to.equal(zip.size);
    expect(smtp.mails.length).to.equal(before + 1);
    const mail = smtp.mails[smtp.mails.length - 1];
    expect(mail.to).to.deep.equal(['muestras@sii.test']);
    const parsed = await simpleParser(mail.raw);
    const pdfs = parsed.attachments.filter((a) => a.contentType === 'application/pdf');
    expect(pdfs.map((a) => a.filename).sort()).to.deep.equal([...zip.keys()].sort());
    for (const a of pdfs) expect(a.content.equals(zip.get(a.filename!)!)).to.equal(true);
    expect(decodePdf417(pdfs[0].content)).to.have.length(1);
  });

  it('POST /dtes/muestras/send over 3 MB answers dte.muestras.too_large and sends nothing (the ZIP is still served)', async () => {
    // another company: 45 invoices of 40 items with 1000-character descriptions (~90 KB of PDF each)
    const big = await orgWithCafs(r.t, { tipos: [33], hasta: 60 });
    const noise = (i: number) =>
      randomBytes(750)
        .toString('base64')
        .replace(/(.{12})/g, '$1 ')
        .slice(0, 1000 - String(i).length) + String(i);
    const ids: string[] = [];
    for (let n = 0; n < 45; n++) {
      const b = body(33, big.rut, 1000);
      b.items = Array.from({ length: 40 }, (_, i) => ({
        nombre: `Artículo ${i + 1}`,
        descripcion: noise(i),
        cantidad: 1,
        precio_unitario: 1000,
        exento: false,
        monto_item: 1000,
      }));
      const res = await emit(r.t, big, b);
      expect(res.status, res.text).to.equal(202);
      ids.push(res.body.id as string);
    }
    // signed is enough for the sample prints (follow() reads with the first company's key)
    for (const id of ids) {
      const deadline = Date.now() + 120_000;
      while ((await call(r.t.url, 'GET', `/dtes/${id}/xml`, { key: big.key })).status !== 200) {
        if (Date.now() > deadline) throw new Error(`${id} not signed`);
        await new Promise((ok) => setTimeout(ok, 250));
      }
    }
    const before = smtp.mails.length;
    const res = await call(r.t.url, 'POST', '/dtes/muestras/send', { key: big.key });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('dte.muestras.too_large');
    expect(res.body.next_action).to.equal('paginate_into_multiple_emails');
    const detail = res.body.detail as { bytes: number; max: number; files: number };
    expect(detail.max).to.equal(3 * 1024 * 1024);
    expect(detail.bytes).to.be.greaterThan(detail.max);
    expect(detail.files).to.equal(45);
    expect(smtp.mails.length).to.equal(before);
    const zip = await fetchBytes(r.t.url, 'GET', '/dtes/muestras', big.key);
    expect(zip.status).to.equal(200);
    expect(unzip(zip.bytes).size).to.equal(45);
  });
});

describe('printed form over HTTP without the signer or a mail server', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi();
  });
  after(async () => t?.close());

  it('a document not signed yet answers 409 dte.pdf.not_signed with xml_url; muestras are empty and send is not configured', async () => {
    const o = await orgWithCafs(t, { tipos: [33] });
    const res = await emit(t, o, body(33, o.rut));
    expect(res.status).to.equal(202);
    const id = res.body.id as string;
    const pdf = await call(t.url, 'GET', `/dtes/${id}/pdf`, { key: o.key });
    expect(pdf.status).to.equal(409);
    expect(pdf.body.code).to.equal('dte.pdf.not_signed');
    expect(pdf.body.next_action).to.equal('poll_self');
    expect(pdf.body.xml_url).to.equal(`/api/v1/dtes/${id}/xml`);
    expect(pdf.headers.get('x-request-id')).to.be.a('string');
    const zip = await call(t.url, 'GET', '/dtes/muestras', { key: o.key });
    expect(zip.status).to.equal(422);
    expect(zip.body.code).to.equal('dte.muestras.empty');
    const send = await call(t.url, 'POST', '/dtes/muestras/send', { key: o.key });
    expect(send.status).to.equal(422);
    expect(send.body.code).to.equal('dte.muestras.send_not_configured');
  });
});
