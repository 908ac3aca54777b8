/**
 * Notes over our own documents (issue 11, items 2 and 3): the rules of note-rules.ts at POST /dtes
 * (dte.nota_credito.*, dte.reference.cross_env, nota_previa_override_required, guia.*) and at
 * POST /dtes/:id/derive (its own codes), over HTTP with real PostgreSQL and Redis. Every refusal
 * is checked to issue nothing: no row in dtes, and the CAF's next folio unchanged.
 *
 * Old documents are made by issuing them today and moving their fecha_emision back in the
 * database (the only way to have a 7-month-old document: emission only accepts this month).
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { santiagoDate } from '@dte/engine';
import { addMonths, endOfNextMonth } from '@dte/emission';
import { call, startTestApi, type Answer, type TestApi } from './support/test-api';
import { body, emit, expectSchema, nextFolio, orgWithCafs, today, type DteOrg } from './dtes-fixtures';

const TIPOS = [33, 34, 52, 56, 61];
const DAY = 86_400_000;
const days = (a: string, b: string) => Math.round((Date.parse(a) - Date.parse(b)) / DAY);

interface Issued {
  id: string;
  folio: number;
  tipo: number;
  monto_total: number;
  fecha: string;
}

describe('notes over our own documents: rules at POST /dtes and POST /dtes/:id/derive', function () {
  this.timeout(240_000);
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    t = await startTestApi();
    o = await orgWithCafs(t, { tipos: TIPOS, hasta: 200 });
  });
  after(async () => t?.close());

  const db = () => t.db.dataSource;

  async function issue(json: Record<string, unknown>): Promise<Issued> {
    const res = await emit(t, o, json);
    expect(res.status, res.text).to.equal(202);
    const b = res.body as {
      id: string;
      folio: number;
      tipo_dte: number;
      monto_total: number;
      fecha_emision: string;
    };
    return { id: b.id, folio: b.folio, tipo: b.tipo_dte, monto_total: b.monto_total, fecha: b.fecha_emision };
  }

  async function backdate(doc: Issued, fecha: string): Promise<Issued> {
    await db().query('UPDATE dtes SET fecha_emision = $2 WHERE id = $1', [doc.id, fecha]);
    return { ...doc, fecha };
  }

  const ref = (doc: Issued, cod: number) => ({
    line_num: 1,
    tipo_doc_ref: doc.tipo,
    folio_ref: doc.folio,
    fecha_ref: doc.fecha,
    cod_ref: cod,
    razon_ref: 'Ajuste',
  });

  /** A 61 over `doc` with cod_ref `cod` (amount `precio`). */
  const nc = (doc: Issued, cod: 1 | 2 | 3, precio = 1000, extra: Record<string, unknown> = {}) => ({
    ...body(61, o.rut, cod === 2 ? 0 : precio),
    nc_reason: cod === 1 ? 'anulacion' : cod === 2 ? 'correccion_texto' : 'correccion_monto',
    references: [ref(doc, cod)],
    ...extra,
  });

  const derive = (id: string, json: unknown, idem: string = randomUUID(), key = o.key): Promise<Answer> =>
    call(t.url, 'POST', `/dtes/${id}/derive`, {
      key,
      json,
      headers: { 'Idempotency-Key': idem, 'X-Cert-Id': o.certId },
    });

  const count = async (): Promise<number> =>
    Number((await db().query('SELECT count(*) AS n FROM dtes WHERE organization_id = $1', [o.orgId]))[0].n);

  /** Runs `attempt` and checks it answered `status`/`code`, issued nothing and used no folio. */
  async function refused(
    attempt: () => Promise<Answer>,
    status: number,
    code: string,
    tipos = [56, 61, 33, 34, 52],
  ): Promise<Record<string, unknown>> {
    const folios = await Promise.all(tipos.map((tp) => nextFolio(t, o, tp)));
    const before = await count();
    const res = await attempt();
    expect(res.status, res.text).to.equal(status);
    expect(res.body.code, res.text).to.equal(code);
    expectSchema('error.schema.json', res.body);
    expect(await count(), 'no document written').to.equal(before);
    expect(await Promise.all(tipos.map((tp) => nextFolio(t, o, tp))), 'no folio used').to.deep.equal(folios);
    return res.body;
  }

  it('a credit note more than 6 months after the invoice: dte.nota_credito.fuera_plazo at emission, fuera_plazo with days_overdue at derive; a text correction is not limited', async () => {
    const old = await backdate(await issue(body(33, o.rut)), addMonths(today(), -7));
    const limit = addMonths(old.fecha, 6);
    const e = await refused(() => emit(t, o, nc(old, 3)), 422, 'dte.nota_credito.fuera_plazo');
    expect(e.next_action).to.equal('consult_lawyer_or_use_correction_path');
    expect(e.detail).to.deep.include({ plazo_vencio_el: limit, days_overdue: days(today(), limit) });
    // no override exists: override flags change nothing
    await refused(
      () => emit(t, o, nc(old, 1, 1000, { override_plazo_anulacion: true, override_nota_previa: true })),
      422,
      'dte.nota_credito.fuera_plazo',
    );
    const d = await refused(
      () => derive(old.id, { action: 'corregir-nc', items: body(61, o.rut, 500).items }),
      422,
      'fuera_plazo',
    );
    expect(d.days_overdue).to.equal(days(today(), limit));
    expect(d).to.not.have.property('next_action');
    await refused(() => derive(old.id, { action: 'anular' }), 422, 'fuera_plazo');
    // cod_ref 2 moves no amount: issued
    const texto = await derive(old.id, {
      action: 'corregir-texto',
      razon_ref: 'Donde dice Martillo debe decir Combo',
    });
    expect(texto.status, texto.text).to.equal(202);
    expect(texto.body).to.include({
      tipo_dte: 61,
      monto_total: 0,
      action: 'corregir-texto',
      derived_from: old.id,
    });
  });

  it('a credit note on a ceded invoice needs override_cedida: dte.nota_credito.cedida_override_required / cedida_override_required', async () => {
    const inv = await issue(body(33, o.rut));
    await db().query(
      `INSERT INTO dte_cessions (dte_id, cesionario_rut, ceded_at) VALUES ($1, '96666666-6', now())`,
      [inv.id],
    );
    const e = await refused(() => emit(t, o, nc(inv, 3)), 409, 'dte.nota_credito.cedida_override_required');
    expect(e.next_action).to.equal('confirm_override_and_retry');
    const d = await refused(
      () => derive(inv.id, { action: 'corregir-nc', items: body(61, o.rut, 500).items }),
      409,
      'cedida_override_required',
    );
    expect(d).to.not.have.property('next_action');
    // a debit note is not a credit note: not blocked by the cession
    const nd = await derive(inv.id, { action: 'corregir-nd', items: body(56, o.rut, 300).items });
    expect(nd.status, nd.text).to.equal(202);
    const before = await nextFolio(t, o, 61);
    const ok = await emit(t, o, nc(inv, 3, 1000, { override_cedida: true, override_nota_previa: true }));
    expect(ok.status, ok.text).to.equal(202);
    expect(ok.body.folio).to.equal(before);
  });

  it('an annulment after the next tax period needs override_plazo_anulacion, with plazo_vencio_el and days_overdue at derive', async () => {
    const firstOfMonth = `${today().slice(0, 7)}-01`;
    const inv = await backdate(await issue(body(33, o.rut)), addMonths(firstOfMonth, -2));
    const limit = endOfNextMonth(inv.fecha);
    const e = await refused(
      () => emit(t, o, nc(inv, 1, inv.monto_total)),
      409,
      'dte.nota_credito.plazo_anulacion_override_required',
    );
    expect(e.next_action).to.equal('confirm_override_and_retry');
    const d = await refused(
      () => derive(inv.id, { action: 'anular' }),
      409,
      'plazo_anulacion_override_required',
    );
    expect(d.plazo_vencio_el).to.equal(limit);
    expect(d.days_overdue).to.equal(days(today(), limit));
    // an amount correction in the same month is not an annulment: issued
    const corr = await derive(inv.id, { action: 'corregir-nc', items: body(61, o.rut, 100).items });
    expect(corr.status, corr.text).to.equal(202);
    // the override passes the period (the previous correction still needs its own override)
    await refused(
      () => derive(inv.id, { action: 'anular', override_plazo_anulacion: true }),
      409,
      'nota_previa_override_required',
    );
    const ok = await derive(inv.id, {
      action: 'anular',
      override_plazo_anulacion: true,
      override_nota_previa: true,
    });
    expect(ok.status, ok.text).to.equal(202);
    expect(ok.body).to.include({ tipo_dte: 61, monto_total: inv.monto_total });
  });

  it('a second note over a document with an amount-correcting or annulling note: nota_previa_override_required with nota_previa, total_notas_previas, cobertura', async () => {
    const inv = await issue(body(33, o.rut, 10000)); // 11 900
    const first = await derive(inv.id, { action: 'corregir-nc', items: body(61, o.rut, 1000).items });
    expect(first.status, first.text).to.equal(202);
    const e = await refused(() => emit(t, o, nc(inv, 3, 500)), 409, 'nota_previa_override_required');
    expect(e).to.deep.include({ total_notas_previas: 1, cobertura: 'parcial' });
    expect(e.nota_previa).to.deep.include({
      id: first.body.id,
      tipo_dte: 61,
      folio: first.body.folio,
      cod_ref: 3,
    });
    const d = await refused(() => derive(inv.id, { action: 'anular' }), 409, 'nota_previa_override_required');
    expect(d).to.deep.include({ total_notas_previas: 1, cobertura: 'parcial' });
    // a debit note over it too
    await refused(
      () => derive(inv.id, { action: 'corregir-nd', items: body(56, o.rut, 10).items }),
      409,
      'nota_previa_override_required',
    );
    const annul = await derive(inv.id, { action: 'anular', override_nota_previa: true });
    expect(annul.status, annul.text).to.equal(202);
    const again = await refused(() => emit(t, o, nc(inv, 3, 500)), 409, 'nota_previa_override_required');
    expect(again).to.deep.include({ total_notas_previas: 2, cobertura: 'completa' });
    expect(again.nota_previa).to.deep.include({ id: annul.body.id, cod_ref: 1 });
    // a note rejected by the SII does not count
    await db().query(`UPDATE dtes SET sii_status = 'RCH' WHERE id = ANY($1)`, [
      [first.body.id, annul.body.id],
    ]);
    const after = await emit(t, o, nc(inv, 3, 500));
    expect(after.status, after.text).to.equal(202);
  });

  it('a reference whose folio exists only in the other environment: dte.reference.cross_env', async () => {
    const inv = await issue(body(33, o.rut));
    const [{ name }] = await db().query('SELECT name FROM organizations WHERE id = $1', [o.orgId]);
    const prod = await t.seed({
      org: name,
      rut: o.rut,
      env: 'prod',
      prodTipos: [33, 61],
      resolucion: { numero: 80, fecha: '2014-08-22' },
    });
    const before = await count();
    const res = await call(t.url, 'POST', '/dtes', {
      key: prod.api_key,
      json: nc(inv, 3),
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': o.certId },
    });
    expect(res.status, res.text).to.equal(422);
    expect(res.body).to.include({ code: 'dte.reference.cross_env', next_action: 'emit_in_the_same_sii_env' });
    expect(res.body.detail).to.include({
      sii_env: 'prod',
      sii_env_referenciado: 'cert',
      folio_ref: inv.folio,
    });
    expect(await count()).to.equal(before);
    // derive from a prod key cannot even see the cert document
    const d = await derive(inv.id, { action: 'anular' }, randomUUID(), prod.api_key);
    expect(d.status).to.equal(404);
    expect(d.body.code).to.equal('document.not_found');
  });

  it('guías: an invoice of an invoiced guía is guia.ya_facturada; a guía de devolución over a non-guía is guia.tipo_invalido; annulling the invoice frees the guía', async () => {
    const guia = await issue(body(52, o.rut));
    const guiaRef = {
      line_num: 1,
      tipo_doc_ref: 52,
      folio_ref: guia.folio,
      fecha_ref: guia.fecha,
      razon_ref: 'Factura guía',
    };
    // stored as a digit string: the rules find it by number too
    const factura = await issue({
      ...body(33, o.rut),
      references: [{ ...guiaRef, folio_ref: String(guia.folio) }],
    });
    const e = await refused(
      () => emit(t, o, { ...body(33, o.rut), references: [guiaRef] }),
      409,
      'guia.ya_facturada',
    );
    expect(e.next_action).to.equal('anula_la_factura_via_nota_credito');
    expect(e.detail).to.deep.include({
      factura: { id: factura.id, tipo_dte: 33, folio: factura.folio, fecha_emision: factura.fecha },
    });
    // a digit string against a stored digit string
    await refused(
      () => emit(t, o, { ...body(34, o.rut), references: [{ ...guiaRef, folio_ref: String(guia.folio) }] }),
      409,
      'guia.ya_facturada',
    );
    // copying the invoice would invoice the guía again
    await refused(() => derive(factura.id, { action: 'copy' }), 409, 'guia.ya_facturada');
    const devolucion = (refs: unknown[]) => {
      const b = body(52, o.rut);
      return { ...b, despacho: { ...(b.despacho as object), ind_traslado: 7 }, references: refs };
    };
    const t33 = await refused(
      () =>
        emit(
          t,
          o,
          devolucion([
            {
              line_num: 1,
              tipo_doc_ref: 33,
              folio_ref: factura.folio,
              fecha_ref: factura.fecha,
              razon_ref: 'Devolución',
            },
          ]),
        ),
      409,
      'guia.tipo_invalido',
    );
    expect(t33.next_action).to.equal('use_nota_credito_para_factura');
    await refused(() => emit(t, o, devolucion([guiaRef])), 409, 'guia.ya_facturada');
    // annul the invoice: the guía can be invoiced (or returned) again
    const annul = await derive(factura.id, { action: 'anular' });
    expect(annul.status, annul.text).to.equal(202);
    const again = await emit(t, o, { ...body(33, o.rut), references: [guiaRef] });
    expect(again.status, again.text).to.equal(202);
  });

  it('derive: invalid_action, document.not_found (unknown, not a uuid, another organization), document.not_templatable; nothing issued', async () => {
    const inv = await issue(body(33, o.rut));
    const bad = await refused(() => derive(inv.id, { action: 'borrar' }), 400, 'invalid_action');
    expect(bad).to.not.have.property('next_action');
    await refused(() => derive(inv.id, {}), 400, 'invalid_action');
    await refused(() => derive(randomUUID(), { action: 'anular' }), 404, 'document.not_found');
    await refused(() => derive('not-a-uuid', { action: 'anular' }), 404, 'document.not_found');
    const other = await orgWithCafs(t, { tipos: [33] });
    const theirs = await emit(t, other, body(33, other.rut));
    expect(theirs.status).to.equal(202);
    await refused(() => derive(theirs.body.id as string, { action: 'copy' }), 404, 'document.not_found');
    const note = await derive(inv.id, { action: 'corregir-nc', items: body(61, o.rut, 100).items });
    expect(note.status, note.text).to.equal(202);
    const nt = await refused(
      () => derive(note.body.id as string, { action: 'copy' }),
      422,
      'document.not_templatable',
    );
    expect(nt.detail).to.deep.include({ tipo_dte: 61 });
    await refused(() => derive(inv.id, { action: 'corregir-nc' }), 400, 'validation_failed');
    await refused(() => derive(inv.id, { action: 'anular', extra: 1 }), 400, 'validation_failed');
    const partial = await refused(
      () => derive(inv.id, { action: 'anular', items: body(61, o.rut, 100).items }),
      400,
      'validation_failed',
    );
    expect(partial.issues).to.deep.equal([{ path: '/items', message: 'is not accepted with action anular' }]);
    const noKey = await call(t.url, 'POST', `/dtes/${inv.id}/derive`, {
      key: o.key,
      json: { action: 'copy' },
      headers: { 'X-Cert-Id': o.certId },
    });
    expect(noKey.body.code).to.equal('idempotency_key_missing');
  });

  it('derive builds each document from the original: references with the right cod_ref, reasons, amounts; same key and body give the same document', async () => {
    const inv = await issue(body(33, o.rut, 20000));
    const stored = async (id: string) =>
      (await db().query('SELECT input, document FROM dtes WHERE id = $1', [id]))[0] as {
        input: Record<string, unknown>;
        document: { Referencia?: Record<string, unknown>[] };
      };
    const idem = randomUUID();
    const anul = await derive(inv.id, { action: 'anular' }, idem);
    expect(anul.status, anul.text).to.equal(202);
    expectSchema('dte-derive-response.schema.json', anul.body);
    expect(anul.body).to.include({
      tipo_dte: 61,
      monto_neto: 20000,
      iva: 3800,
      monto_total: 23800,
      status: 'queued',
    });
    const a = await stored(anul.body.id as string);
    expect(a.input).to.include({ tipo_dte: 61, nc_reason: 'anulacion' });
    expect(a.document.Referencia?.[0]).to.include({
      TpoDocRef: '33',
      FolioRef: String(inv.folio),
      CodRef: 1,
    });
    const replay = await derive(inv.id, { action: 'anular' }, idem);
    expect(replay.status).to.equal(202);
    expect(replay.body.id).to.equal(anul.body.id);
    const conflict = await derive(inv.id, { action: 'anular', razon_ref: 'otra' }, idem);
    expect(conflict.status).to.equal(409);
    expect(conflict.body.code).to.equal('idempotency_conflict');
    // annulling the credit note: a 56 with reposicion_nc_anulada over the 61
    const repo = await derive(anul.body.id as string, { action: 'anular' });
    expect(repo.status, repo.text).to.equal(202);
    expect(repo.body).to.include({ tipo_dte: 56, monto_total: 23800 });
    const r = await stored(repo.body.id as string);
    expect(r.input).to.include({ nd_reason: 'reposicion_nc_anulada' });
    expect(r.document.Referencia?.[0]).to.include({
      TpoDocRef: '61',
      FolioRef: String(anul.body.folio),
      CodRef: 1,
    });
    // text correction: cod_ref 2, zero amounts
    const inv2 = await issue(body(34, o.rut, 5000));
    const texto = await derive(inv2.id, { action: 'corregir-texto', razon_ref: 'Corrige giro del receptor' });
    expect(texto.status, texto.text).to.equal(202);
    expect(texto.body).to.include({ tipo_dte: 61, monto_neto: 0, monto_exento: 0, iva: 0, monto_total: 0 });
    const tx = await stored(texto.body.id as string);
    expect(tx.input).to.include({ nc_reason: 'correccion_texto' });
    expect(tx.document.Referencia?.[0]).to.include({
      TpoDocRef: '34',
      CodRef: 2,
      RazonRef: 'Corrige giro del receptor',
    });
    // corregir-nd over inv2 (after the text correction, which does not count as a previous note)
    const nd = await derive(inv2.id, {
      action: 'corregir-nd',
      nd_reason: 'interese_moratorio_contractual',
      items: [{ nombre: 'Interés', cantidad: 1, precio_unitario: 700, exento: true, monto_item: 700 }],
    });
    expect(nd.status, nd.text).to.equal(202);
    expect(nd.body).to.include({ tipo_dte: 56, monto_exento: 700, monto_total: 700 });
    expect((await stored(nd.body.id as string)).document.Referencia?.[0]).to.include({
      TpoDocRef: '34',
      CodRef: 3,
    });
  });

  it('two annulments of one invoice at the same time: exactly one is issued, the other answers nota_previa_override_required', async () => {
    const inv = await issue(body(33, o.rut));
    const before = await nextFolio(t, o, 61);
    const answers = await Promise.all([
      derive(inv.id, { action: 'anular' }),
      derive(inv.id, { action: 'anular' }),
      emit(t, o, nc(inv, 1, inv.monto_total)),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text).join('\n')).to.deep.equal([202, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.body.code).to.equal('nota_previa_override_required');
    }
    expect(await nextFolio(t, o, 61)).to.equal(before + 1);
  });

  it('the same body gives the same totals through POST /dtes and through derive (copy and anular)', async () => {
    const original = body(33, o.rut, 33333);
    const inv = await issue({
      ...original,
      items: [
        ...(original.items as object[]),
        { nombre: 'Libro', cantidad: 3, precio_unitario: 1500, exento: true, monto_item: 4500 },
      ],
      descuento_global: [{ tipo: 'descuento', es_porcentaje: true, valor: 10 }],
    });
    const amounts = (b: Record<string, unknown>) => [b.monto_neto, b.monto_exento, b.iva, b.monto_total];
    const invRow = (await call(t.url, 'GET', `/dtes/${inv.id}`, { key: o.key })).body;
    const copy = await derive(inv.id, { action: 'copy' });
    expect(copy.status, copy.text).to.equal(202);
    expect(copy.body.tipo_dte).to.equal(33);
    expect(copy.body.folio).to.not.equal(inv.folio);
    expect(amounts(copy.body)).to.deep.equal(amounts(invRow));
    // the derived note's body, sent as is to POST /dtes (with the override a second note needs)
    const anul = await derive(inv.id, { action: 'anular' });
    expect(anul.status, anul.text).to.equal(202);
    const [{ input }] = await db().query('SELECT input FROM dtes WHERE id = $1', [anul.body.id]);
    const direct = await emit(t, o, { ...input, override_nota_previa: true });
    expect(direct.status, direct.text).to.equal(202);
    expect(amounts(direct.body)).to.deep.equal(amounts(anul.body));
    expect(amounts(anul.body)).to.deep.equal(amounts(invRow));
  });
});

describe('GET /dtes/totales', function () {
  this.timeout(120_000);
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    t = await startTestApi();
    o = await orgWithCafs(t, { tipos: [33, 34, 61] });
  });
  after(async () => t?.close());

  const totales = (q = '', key = o.key) => call(t.url, 'GET', `/dtes/totales${q}`, { key });

  it("counts and sums the month's documents per tipo_dte and per sii_status, of the caller's organization only", async () => {
    const empty = await totales();
    expect(empty.status, empty.text).to.equal(200);
    expectSchema('dte-totales.schema.json', empty.body);
    expect(empty.body).to.deep.equal({
      periodo: santiagoDate(new Date()).slice(0, 7),
      sii_env: 'cert',
      total: { cantidad: 0, monto_neto: 0, monto_exento: 0, iva: 0, monto_total: 0 },
      por_tipo: [],
      por_estado: [],
    });
    const a = await emit(t, o, body(33, o.rut, 10000));
    const b = await emit(t, o, body(33, o.rut, 20000));
    const c = await emit(t, o, body(34, o.rut, 5000));
    for (const r of [a, b, c]) expect(r.status, r.text).to.equal(202);
    const n = await call(t.url, 'POST', `/dtes/${a.body.id}/derive`, {
      key: o.key,
      json: { action: 'anular' },
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': o.certId },
    });
    expect(n.status, n.text).to.equal(202);
    await t.db.dataSource.query(`UPDATE dtes SET sii_status = 'EPR' WHERE id = ANY($1)`, [
      [a.body.id, c.body.id],
    ]);
    // another organization's documents are not counted
    const other = await orgWithCafs(t, { tipos: [33] });
    expect((await emit(t, other, body(33, other.rut, 99999))).status).to.equal(202);

    const res = await totales(`?periodo=${today().slice(0, 7)}`);
    expect(res.status, res.text).to.equal(200);
    expectSchema('dte-totales.schema.json', res.body);
    expect(res.body.total).to.deep.equal({
      cantidad: 4,
      monto_neto: 40000,
      monto_exento: 5000,
      iva: 7600,
      monto_total: 52600,
    });
    expect(res.body.por_tipo).to.deep.equal([
      { tipo_dte: 33, cantidad: 2, monto_neto: 30000, monto_exento: 0, iva: 5700, monto_total: 35700 },
      { tipo_dte: 34, cantidad: 1, monto_neto: 0, monto_exento: 5000, iva: 0, monto_total: 5000 },
      { tipo_dte: 61, cantidad: 1, monto_neto: 10000, monto_exento: 0, iva: 1900, monto_total: 11900 },
    ]);
    expect(res.body.por_estado).to.deep.equal([
      {
        sii_status: 'EPR',
        cantidad: 2,
        monto_neto: 10000,
        monto_exento: 5000,
        iva: 1900,
        monto_total: 16900,
      },
      {
        sii_status: 'queued',
        cantidad: 2,
        monto_neto: 30000,
        monto_exento: 0,
        iva: 5700,
        monto_total: 35700,
      },
    ]);
    // another month: nothing
    const prev = await totales('?periodo=2020-01');
    expect(prev.body).to.deep.include({
      periodo: '2020-01',
      total: { cantidad: 0, monto_neto: 0, monto_exento: 0, iva: 0, monto_total: 0 },
    });
    // a document moved to the previous month leaves this one
    await t.db.dataSource.query(
      `UPDATE dtes SET fecha_emision = fecha_emision - interval '1 month' WHERE id = $1`,
      [c.body.id],
    );
    expect(((await totales()).body.total as { cantidad: number }).cantidad).to.equal(3);
  });

  it('answers 400 dte.totales.query_invalid for a periodo that is not YYYY-MM', async () => {
    for (const bad of ['2025-13', '2025-1', '202501', 'abc', '2025-00', '2025-01-01', '0000-01']) {
      const res = await totales(`?periodo=${encodeURIComponent(bad)}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body.code).to.equal('dte.totales.query_invalid');
      expectSchema('error.schema.json', res.body);
    }
  });
});
