import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { classify } from '@dte/status';
import { call, startTestApi, uploadCert, type TestApi } from './support/test-api';
import { body, emit, expectSchema, nextFolio, orgWithCafs, today, type DteOrg } from './dtes-fixtures';

describe('POST /dtes over HTTP', function () {
  this.timeout(180_000);
  let t: TestApi;
  let o: DteOrg;
  const TIPOS = [33, 34, 46, 52, 56, 61, 110, 112];

  before(async () => {
    t = await startTestApi();
    o = await orgWithCafs(t, { tipos: TIPOS });
  });
  after(async () => t?.close());

  it('issues a factura: 202 with the emission response, document and outbox written together', async () => {
    const folioBefore = await nextFolio(t, o, 33);
    const res = await emit(t, o, body(33, o.rut, 10000));
    expect(res.status, res.text).to.equal(202);
    expect(res.headers.get('x-request-id')).to.be.a('string');
    const b = res.body as Record<string, unknown>;
    expectSchema('dte-emission-response.schema.json', b);
    expect(b).to.include({
      status: 'queued',
      sii_status: 'queued',
      folio: folioBefore,
      tipo_dte: 33,
      rut_emisor: o.rut,
      rut_receptor: '77777777-7',
      monto_neto: 10000,
      monto_exento: 0,
      iva: 1900,
      monto_total: 11900,
      sii_env: 'cert',
      fecha_emision: today(),
    });
    expect(b.id).to.match(/^[0-9a-f-]{36}$/);
    expect(b.estado).to.deep.equal(classify('queued'));
    expect((b.estado as { terminal: boolean }).terminal).to.equal(false);
    expect(b.links).to.deep.equal({
      self: `/api/v1/dtes/${b.id}`,
      pdf: `/api/v1/dtes/${b.id}/pdf`,
      xml: `/api/v1/dtes/${b.id}/xml`,
      events: `/api/v1/dtes/${b.id}/events`,
    });
    expect(await nextFolio(t, o, 33)).to.equal(folioBefore + 1);
    const outbox: { topic: string; message_key: string; payload: Record<string, unknown> }[] =
      await t.db.dataSource.query(
        `SELECT topic, message_key, payload FROM outbox WHERE message_key = $1 ORDER BY id`,
        [b.id],
      );
    expect(outbox.map((r) => r.topic)).to.deep.equal(['dte.commands', 'dte-status']);
    expect(outbox[0].payload).to.include({
      dte_id: b.id,
      tipo_dte: 33,
      folio: folioBefore,
      certificate_id: o.certId,
      sii_env: 'cert',
    });
    expect(outbox[1].payload).to.include({ dte_id: b.id, sii_status: 'queued', source: 'api' });
    expect(outbox[0].payload.event_id).to.not.equal(outbox[1].payload.event_id);
    // the stored document is the engine's build with the assigned folio
    const doc: { document: { Encabezado: { IdDoc: { Folio: number; TipoDTE: number } } } }[] =
      await t.db.dataSource.query('SELECT document FROM dtes WHERE id = $1', [b.id]);
    expect(doc[0].document.Encabezado.IdDoc).to.include({ Folio: folioBefore, TipoDTE: 33 });
  });

  it('issues every supported type (33, 34, 46, 52, 56, 61, 110, 112), each from its own folio sequence', async () => {
    for (const tipo of TIPOS) {
      const before = await nextFolio(t, o, tipo);
      const res = await emit(t, o, body(tipo, o.rut));
      expect(res.status, `${tipo}: ${res.text}`).to.equal(202);
      expect(res.body).to.include({ tipo_dte: tipo, folio: before, sii_status: 'queued' });
    }
    const exp = await emit(t, o, body(110, o.rut));
    expect(exp.body).to.include({ monto_exento: 19475, monto_total: 19475, iva: 0 });
  });

  it('answers dte.tipo_not_supported for boletas 39 and 41', async () => {
    for (const tipo of [39, 41]) {
      const res = await emit(t, o, { ...body(33, o.rut), tipo_dte: tipo });
      expect(res.status).to.equal(400);
      expect(res.body).to.include({ code: 'dte.tipo_not_supported', next_action: 'fix_tipo_dte_and_retry' });
    }
  });

  it('answers the engine validation codes and consumes no folio', async () => {
    const before = await nextFolio(t, o, 33);
    let res = await emit(t, o, { ...body(33, o.rut), items: [] });
    expect(res.body.code).to.equal('items_empty');
    res = await emit(t, o, { ...body(33, o.rut), receptor: { rut: '77777777-7', razon_social: 'X' } });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('validation_failed');
    expect((res.body.issues as unknown[]).length).to.be.greaterThan(0);
    res = await emit(t, o, { ...body(33, o.rut), monto_total: 1 });
    expect(res.body.code).to.equal('amount_arithmetic');
    res = await emit(t, o, { ...body(33, o.rut), fecha_emision: '2020-01-01' });
    expect(res.body.code).to.equal('validation_failed');
    expect(await nextFolio(t, o, 33)).to.equal(before);
  });

  it('prices an export without otra_moneda at the rate source, and answers dte.tipo_cambio_unavailable (no folio used) without one', async () => {
    const { otra_moneda: _o, ...noRate } = body(110, o.rut);
    void _o;
    let before = await nextFolio(t, o, 110);
    let res = await emit(t, o, noRate); // the source has no USD rate yet
    expect(res.status).to.equal(503);
    expect(res.body).to.include({ code: 'dte.tipo_cambio_unavailable', next_action: 'retry_later' });
    expect(await nextFolio(t, o, 110)).to.equal(before);
    res = await emit(t, o, { ...noRate, tpo_moneda: 'ESCUDO' });
    expect(res.body.code).to.equal('dte.tipo_cambio_unavailable');
    const put = await fetch(`${t.sim.url}/admin/exchange-rates`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ moneda: 'USD', fecha: today(), valor: 912.5 }),
    });
    expect(put.status).to.equal(200);
    before = await nextFolio(t, o, 110);
    res = await emit(t, o, noRate);
    expect(res.status, res.text).to.equal(202);
    // 20.5 USD at 912.5 CLP = 18706.25 -> 18706 CLP
    expect(res.body).to.include({ folio: before, monto_exento: 18706, monto_total: 18706 });
  });

  it('answers emisor_rut_mismatch when rut_emisor is not the key company', async () => {
    const res = await emit(t, o, body(33, '76086428-5'));
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('emisor_rut_mismatch');
  });

  it('takes sii_env as a confirmation only: a contradiction is 422 with solicitado/credencial and nothing issued', async () => {
    const before = await nextFolio(t, o, 33);
    const count = async () =>
      Number(
        (
          await t.db.dataSource.query('SELECT count(*) AS n FROM dtes WHERE organization_id = $1', [o.orgId])
        )[0].n,
      );
    const docs = await count();
    const res = await emit(t, o, { ...body(33, o.rut), sii_env: 'prod' });
    expect(res.status).to.equal(422);
    expect(res.body).to.include({
      code: 'dte.sii_env_credential_mismatch',
      next_action: 'use_api_key_matching_sii_env',
    });
    expect(res.body.detail).to.deep.equal({ solicitado: 'prod', credencial: 'cert' });
    expect(await nextFolio(t, o, 33)).to.equal(before);
    expect(await count()).to.equal(docs);
    const ok = await emit(t, o, { ...body(33, o.rut), sii_env: 'cert' });
    expect(ok.status).to.equal(202);
    expect(ok.body.sii_env).to.equal('cert');
  });

  it('requires Idempotency-Key (idempotency_key_missing)', async () => {
    const res = await emit(t, o, body(33, o.rut), { idem: null });
    expect(res.status).to.equal(400);
    expect(res.body).to.include({
      code: 'idempotency_key_missing',
      next_action: 'send_idempotency_key_header',
    });
  });

  it('returns the same document for the same key and body, and 409 idempotency_conflict for another body', async () => {
    const key = randomUUID();
    const b = body(33, o.rut, 777);
    const first = await emit(t, o, b, { idem: key });
    expect(first.status).to.equal(202);
    const before = await nextFolio(t, o, 33);
    // same body with keys in another order is the same body
    const reordered = Object.fromEntries(Object.entries(b).reverse());
    const again = await emit(t, o, reordered, { idem: key });
    expect(again.status).to.equal(202);
    expect(again.body.id).to.equal(first.body.id);
    expect(again.body.folio).to.equal(first.body.folio);
    expect(await nextFolio(t, o, 33)).to.equal(before);
    const other = await emit(t, o, body(33, o.rut, 778), { idem: key });
    expect(other.status).to.equal(409);
    expect(other.body.code).to.equal('idempotency_conflict');
    expect(other.body.detail).to.deep.equal({ existingDteId: first.body.id });
  });

  it('answers a used key from its document even when the attempt itself would now be refused (folios run out)', async () => {
    const small = await orgWithCafs(t, { tipos: [33], hasta: 2 });
    const key = randomUUID();
    const b = body(33, small.rut, 31);
    const first = await emit(t, small, b, { idem: key });
    expect(first.status).to.equal(202);
    expect((await emit(t, small, body(33, small.rut, 32))).status).to.equal(202); // the last folio
    const fresh = await emit(t, small, body(33, small.rut, 33));
    expect(fresh.body.code).to.equal('caf_exhausted');
    const retry = await emit(t, small, b, { idem: key });
    expect(retry.status).to.equal(202);
    expect(retry.body.id).to.equal(first.body.id);
    expect(retry.body.folio).to.equal(first.body.folio);
    const other = await emit(t, small, body(33, small.rut, 34), { idem: key });
    expect(other.status).to.equal(409);
    expect(other.body).to.include({ code: 'idempotency_conflict' });
  });

  it('scopes an Idempotency-Key to the environment: the same key under a production key is a new emission', async () => {
    const key = randomUUID();
    const b = body(33, o.rut, 2024);
    const cert = await emit(t, o, b, { idem: key });
    expect(cert.status).to.equal(202);
    const org: { name: string }[] = await t.db.dataSource.query(
      'SELECT name FROM organizations WHERE id = $1',
      [o.orgId],
    );
    const prod = await t.seed({
      org: org[0].name,
      rut: o.rut,
      env: 'prod',
      prodTipos: [33],
      resolucion: { numero: 80, fecha: '2014-08-22' },
    });
    expect(prod.organization_id).to.equal(o.orgId);
    const res = await emit(t, { ...o, key: prod.api_key }, b, { idem: key });
    expect(res.body.id).to.equal(undefined);
    expect(res.body.code).to.equal('caf_not_found'); // a new production emission, which has no CAF
  });

  it('creates exactly one document and consumes one folio for concurrent duplicates', async () => {
    const key = randomUUID();
    const before = await nextFolio(t, o, 34);
    const b = body(34, o.rut, 4321);
    const answers = await Promise.all(Array.from({ length: 8 }, () => emit(t, o, b, { idem: key })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(8).fill(202));
    expect(new Set(answers.map((a) => a.body.id)).size).to.equal(1);
    expect(await nextFolio(t, o, 34)).to.equal(before + 1);
    const rows = await t.db.dataSource.query(
      'SELECT id FROM dtes WHERE organization_id = $1 AND idempotency_key = $2',
      [o.orgId, key],
    );
    expect(rows).to.have.length(1);
    const cmds = await t.db.dataSource.query(
      `SELECT id FROM outbox WHERE topic = 'dte.commands' AND message_key = $1`,
      [answers[0].body.id],
    );
    expect(cmds).to.have.length(1);
  });

  it('lets one of concurrent requests with one key and different bodies win, the others 409, one folio', async () => {
    const key = randomUUID();
    const before = await nextFolio(t, o, 34);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => emit(t, o, body(34, o.rut, 5000 + i), { idem: key })),
    );
    const won = answers.filter((a) => a.status === 202);
    expect(won, JSON.stringify(answers.map((a) => a.body))).to.have.length(1);
    for (const lost of answers.filter((a) => a.status !== 202)) {
      expect(lost.status).to.equal(409);
      expect(lost.body).to.include({ code: 'idempotency_conflict' });
      expect(lost.body.detail).to.deep.equal({ existingDteId: won[0]!.body.id });
    }
    expect(await nextFolio(t, o, 34)).to.equal(before + 1);
    const [{ n }] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM dtes WHERE organization_id = $1 AND idempotency_key = $2`,
      [o.orgId, key],
    );
    expect(n).to.equal(1);
    // the losers wrote no outbox row: every dte.commands of the organization's folio is the winner's
    const cmds = await t.db.dataSource.query(
      `SELECT message_key FROM outbox
        WHERE topic = 'dte.commands' AND payload->>'organization_id' = $1 AND payload->>'tipo_dte' = '34'
          AND payload->>'folio' = $2`,
      [o.orgId, String(won[0]!.body.folio)],
    );
    expect(cmds.map((c: { message_key: string }) => c.message_key)).to.deep.equal([won[0]!.body.id]);
  });

  it('hands out distinct consecutive folios to concurrent emissions with different keys', async () => {
    const before = await nextFolio(t, o, 46);
    const answers = await Promise.all(Array.from({ length: 6 }, () => emit(t, o, body(46, o.rut))));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(6).fill(202));
    const folios = answers.map((a) => a.body.folio as number).sort((a, b) => a - b);
    expect(folios).to.deep.equal([0, 1, 2, 3, 4, 5].map((i) => before + i));
  });

  it('answers caf_not_found, cert_id_missing and cert_not_found before taking any folio', async () => {
    const bare = await orgWithCafs(t, { tipos: [], withCert: true });
    let res = await emit(t, bare, body(33, bare.rut));
    expect(res.status).to.equal(404);
    expect(res.body).to.include({ code: 'caf_not_found' });
    expect(res.body.detail).to.deep.equal({ tipoDte: 33 });
    const noCert = await orgWithCafs(t, { tipos: [], withCert: false });
    res = await emit(t, noCert, body(33, noCert.rut));
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'cert_id_missing', next_action: 'send_cert_id_header' });
    res = await emit(t, o, body(33, o.rut), { headers: { 'X-Cert-Id': randomUUID() } });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('cert_not_found');
  });

  it("chooses the signing certificate among the company's current ones by the X-Cert-Id rules, before any folio", async () => {
    const two = await orgWithCafs(t, { tipos: [33] });
    const second = await uploadCert(t, two.key, two.rut, 'second', 'otra-clave');
    const noHeader = { ...two, certId: '' };
    let res = await emit(t, noHeader, body(33, two.rut));
    expect(res.body.code).to.equal('cert_id_ambiguous');
    expect((res.body.detail as { certificateIds: string[] }).certificateIds).to.have.members([
      two.certId,
      second.id,
    ]);
    // another organization's certificate is as unknown as a missing one
    res = await emit(t, two, body(33, two.rut), { headers: { 'X-Cert-Id': o.certId } });
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.include({ code: 'cert_not_found', detail: { certificateId: o.certId } });
    await t.db.dataSource.query(
      `UPDATE certificates SET not_after = now() - interval '1 day' WHERE id = $1`,
      [second.id],
    );
    res = await emit(t, two, body(33, two.rut), { headers: { 'X-Cert-Id': second.id } });
    expect(res.body.code).to.equal('cert_expired');
    expect(res.body.detail).to.include({ certificateId: second.id });
    expect(await nextFolio(t, two, 33)).to.equal(1);
    // the one named (a uuid in any case) signs the document
    res = await emit(t, two, body(33, two.rut), { headers: { 'X-Cert-Id': two.certId.toUpperCase() } });
    expect(res.status).to.equal(202);
    const rows: { certificate_id: string }[] = await t.db.dataSource.query(
      'SELECT certificate_id FROM dtes WHERE id = $1',
      [res.body.id],
    );
    expect(rows[0].certificate_id).to.equal(two.certId);
  });

  it('in production, answers dte.production_resolucion_missing until the company has its SII resolution', async () => {
    const prod = await orgWithCafs(t, { tipos: [], env: 'prod' });
    let res = await emit(t, prod, body(33, prod.rut));
    expect(res.status).to.equal(409);
    expect(res.body).to.include({
      code: 'dte.production_resolucion_missing',
      next_action: 'capture_sii_resolucion',
    });
    await t.db.dataSource.query(
      `UPDATE companies SET resolucion_prod_numero = 80, resolucion_prod_fecha = '2014-08-22' WHERE id = $1`,
      [prod.companyId],
    );
    res = await emit(t, prod, body(33, prod.rut));
    expect(res.body.code).to.equal('caf_not_found'); // past the check, on to the folio
  });

  it('issues with the company and certificates as they are at that POST (read with the API key, one statement)', async () => {
    const own = await orgWithCafs(t, { tipos: [33] });
    const documentOf = async (id: string): Promise<string> => {
      const rows: { document: unknown }[] = await t.db.dataSource.query(
        'SELECT document FROM dtes WHERE id = $1',
        [id],
      );
      return JSON.stringify(rows[0]!.document);
    };
    const first = await emit(t, own, body(33, own.rut, 1000));
    expect(first.status, first.text).to.equal(202);
    await t.db.dataSource.query(`UPDATE companies SET giro = 'Reparación de bicicletas' WHERE id = $1`, [
      own.companyId,
    ]);
    const second = await emit(t, own, body(33, own.rut, 1000));
    expect(second.status, second.text).to.equal(202);
    expect(await documentOf((first.body as { id: string }).id)).to.include('Venta de ferretería');
    expect(await documentOf((second.body as { id: string }).id)).to.include('Reparación de bicicletas');

    // the certificate deleted since the last POST: refused, no folio used
    await t.db.dataSource.query('UPDATE certificates SET deleted_at = now() WHERE id = $1', [own.certId]);
    const folio = await nextFolio(t, own, 33);
    const named = await emit(t, own, body(33, own.rut, 1000));
    expect(named.status, named.text).to.equal(404);
    expect(named.body).to.include({ code: 'cert_not_found' });
    const unnamed = await emit(t, { ...own, certId: '' }, body(33, own.rut, 1000));
    expect(unnamed.body).to.include({ code: 'cert_id_missing' });
    expect(await nextFolio(t, own, 33)).to.equal(folio);
  });

  it('needs the dte:write scope', async () => {
    const s = await t.seed({ rut: o.rut, env: 'cert', scopes: ['dte:read'] });
    const res = await call(t.url, 'POST', '/dtes', {
      key: s.api_key,
      json: body(33, o.rut),
      headers: { 'Idempotency-Key': randomUUID() },
    });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('forbidden');
  });

  it('Prefer: wait=N answers 202 when the document does not reach the SII in time, 201 when it does', async () => {
    let started = Date.now();
    const slow = await emit(t, o, body(33, o.rut), { headers: { Prefer: 'wait=1' } });
    expect(slow.status).to.equal(202);
    expect(Date.now() - started).to.be.at.least(900);
    // the uploader records the track id (its column) while the request waits
    started = Date.now();
    const key = randomUUID();
    const pending = emit(t, o, body(33, o.rut, 5555), { idem: key, headers: { Prefer: 'wait=10' } });
    let id: string | undefined;
    for (let i = 0; i < 50 && !id; i++) {
      await new Promise((r) => setTimeout(r, 100));
      id = (await t.db.dataSource.query('SELECT id FROM dtes WHERE idempotency_key = $1', [key]))[0]?.id;
    }
    await t.db.dataSource.query(`UPDATE dtes SET track_id = '1234567890' WHERE id = $1`, [id]);
    const fast = await pending;
    expect(fast.status).to.equal(201);
    expect(fast.body).to.include({ id, track_id: 1234567890 });
    expect(Date.now() - started).to.be.below(9000);
    // a retry with the same key answers from the stored document, sent already
    const retry = await emit(t, o, body(33, o.rut, 5555), { idem: key, headers: { Prefer: 'wait=5' } });
    expect(retry.status).to.equal(201);
  });

  it('is listed in the OpenAPI document', async () => {
    const res = await call(t.url, 'GET', '/openapi.json');
    const paths = res.body.paths as Record<string, Record<string, { operationId: string }>>;
    expect(paths['/dtes'].post.operationId).to.equal('emitDte');
    expect(paths['/dtes'].get.operationId).to.equal('listDtes');
    expect(paths['/dtes/{id}'].get.operationId).to.equal('getDte');
    expect(paths['/dtes/{id}/events'].get.operationId).to.equal('getDteEvents');
    expect(paths['/dtes/{id}/xml'].get.operationId).to.equal('getDteXml');
    expect(paths['/dtes/{id}/refresh-status'].post.operationId).to.equal('refreshDteStatus');
  });
});
