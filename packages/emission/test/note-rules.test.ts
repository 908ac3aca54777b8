/**
 * The rules a note or a guía's invoice must meet over documents of ours (src/note-rules.ts),
 * called as the emission calls them (inside its transaction, before any folio) over documents the
 * database fixture writes with their stored bodies: the environment of the referenced document,
 * Ley 21.398's six months, the annulment period, a ceded invoice, earlier notes, an invoiced guía.
 * Over HTTP, with nothing issued on a refusal: services/api/test/dtes-note-rules.test.ts.
 */
import { expect } from 'chai';
import type { EmissionInput } from '@dte/engine';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import {
  insertCafRow,
  insertCertificateRow,
  insertQueuedDocument,
  insertTenant,
  type Tenant,
} from '../../../test/support/tenant-fixture';
import { addMonths, endOfNextMonth, enforceReferenceRules, type RuleCodes } from '../src';
import { refusal } from '../../../test/support/refusal';

describe('note rules over documents of ours', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  let o: Tenant;
  let certificateId: string;
  const cafs = new Map<string, string>();
  const folios = new Map<string, number>();

  before(async () => {
    db = await migratedDatabase('note_rules');
    o = await insertTenant(db.dataSource);
    certificateId = await insertCertificateRow(db.dataSource, o);
  });
  after(() => db?.cleanup());

  /** a document of ours of `tipo` (in `env`), with its stored body */
  async function ours(
    tipo: number,
    fechaEmision: string,
    opts: {
      env?: 'cert' | 'prod';
      montoTotal?: number;
      input?: Record<string, unknown>;
      status?: string;
    } = {},
  ) {
    const env = opts.env ?? 'cert';
    const k = `${env}:${tipo}`;
    if (!cafs.has(k)) cafs.set(k, await insertCafRow(db.dataSource, o, tipo, 1, 1000, { environment: env }));
    const folio = (folios.get(k) ?? 0) + 1;
    folios.set(k, folio);
    const doc = await insertQueuedDocument(
      db.dataSource,
      { ...o, environment: env },
      {
        tipoDte: tipo,
        folio,
        cafId: cafs.get(k)!,
        certificateId,
        fechaEmision,
        montoTotal: opts.montoTotal,
        input: { tipo_dte: tipo, fecha_emision: fechaEmision, ...opts.input },
      },
    );
    if (opts.status)
      await db.dataSource.query('UPDATE dtes SET sii_status = $2 WHERE id = $1', [doc.id, opts.status]);
    return doc;
  }
  const ref = (doc: { tipoDte: number; folio: number }, cod_ref: number) => ({
    line_num: 1,
    tipo_doc_ref: doc.tipoDte,
    folio_ref: doc.folio,
    fecha_ref: '2026-01-01',
    cod_ref,
    razon_ref: 'Ajuste',
  });
  const check = (
    body: Record<string, unknown>,
    codes: RuleCodes = 'emission',
    env: 'cert' | 'prod' = 'cert',
  ) =>
    db.dataSource.transaction((m) =>
      enforceReferenceRules(
        m,
        { organizationId: o.organizationId, companyId: o.companyId, environment: env },
        body as unknown as EmissionInput,
        codes,
      ),
    );
  const note = (tipo: 56 | 61, fecha: string, refs: unknown[], extra: Record<string, unknown> = {}) => ({
    tipo_dte: tipo,
    fecha_emision: fecha,
    references: refs,
    ...extra,
  });

  it('adds a month clamped to its end, and gives the end of the next month', () => {
    expect(addMonths('2026-08-31', 6)).to.equal('2027-02-28');
    expect(addMonths('2027-08-31', 6)).to.equal('2028-02-29');
    expect(addMonths('2026-01-15', 6)).to.equal('2026-07-15');
    expect(endOfNextMonth('2026-01-31')).to.equal('2026-02-28');
    expect(endOfNextMonth('2026-12-05')).to.equal('2027-01-31');
  });

  it("refuses a note over a folio that is ours only in the other environment, and leaves others' documents alone", async () => {
    const prod = await ours(33, '2026-03-02', { env: 'prod' });
    const err = await refusal(check(note(61, '2026-03-10', [ref(prod, 3)])));
    expect(err.code).to.equal('dte.reference.cross_env');
    expect(err.detail).to.deep.include({ sii_env: 'cert', sii_env_referenciado: 'prod' });
    // a folio nobody of ours holds: the issuer's business, not checked
    await check(note(61, '2026-03-10', [ref({ tipoDte: 33, folio: 999 }, 3)]));
  });

  it("refuses a credit note moving amounts past Ley 21.398's six months, with the days overdue; a text correction passes", async () => {
    const inv = await ours(33, '2026-01-15');
    const late = await refusal(check(note(61, '2026-08-01', [ref(inv, 3)])));
    expect(late.code).to.equal('dte.nota_credito.fuera_plazo');
    expect(late.detail).to.deep.include({ plazo_vencio_el: '2026-07-15', days_overdue: 17 });
    // derive's own code for the same rule
    expect((await refusal(check(note(61, '2026-08-01', [ref(inv, 3)]), 'derive'))).code).to.equal(
      'fuera_plazo',
    );
    await check(note(61, '2026-08-01', [ref(inv, 2)]));
    await check(note(61, '2026-07-15', [ref(inv, 3)]));
  });

  it('asks to confirm an annulment past the next tax period and a credit note over a ceded invoice', async () => {
    const inv = await ours(33, '2026-01-20');
    const period = await refusal(check(note(61, '2026-03-01', [ref(inv, 1)])));
    expect(period.code).to.equal('dte.nota_credito.plazo_anulacion_override_required');
    expect(period.detail).to.deep.include({ plazo_vencio_el: '2026-02-28', days_overdue: 1 });
    await check(note(61, '2026-02-28', [ref(inv, 1)]));
    await check(note(61, '2026-03-01', [ref(inv, 1)], { override_plazo_anulacion: true }));

    const ceded = await ours(33, '2026-02-02');
    await db.dataSource.query(
      `INSERT INTO dte_cessions (dte_id, cesionario_rut, ceded_at) VALUES ($1, '96543210-9', now())`,
      [ceded.id],
    );
    expect((await refusal(check(note(61, '2026-02-10', [ref(ceded, 3)])))).code).to.equal(
      'dte.nota_credito.cedida_override_required',
    );
    await check(note(61, '2026-02-10', [ref(ceded, 3)], { override_cedida: true }));
  });

  it('asks to confirm a note over a document already annulled or corrected, saying how much is covered; refused notes do not count', async () => {
    const inv = await ours(33, '2026-04-01', { montoTotal: 1190 });
    await check(note(61, '2026-04-10', [ref(inv, 3)]));
    await ours(61, '2026-04-10', { montoTotal: 500, input: { references: [ref(inv, 3)] } });
    const partial = await refusal(check(note(61, '2026-04-11', [ref(inv, 3)])));
    expect(partial.code).to.equal('nota_previa_override_required');
    expect(partial.detail).to.deep.include({
      total_notas_previas: 1,
      monto_notas_previas: 500,
      cobertura: 'parcial',
    });
    // a text correction (cod_ref 2) is no previous note; a note the SII refused neither
    await ours(61, '2026-04-12', { montoTotal: 0, input: { references: [ref(inv, 2)] } });
    await ours(61, '2026-04-12', { montoTotal: 690, input: { references: [ref(inv, 3)] }, status: 'RCH' });
    expect((await refusal(check(note(56, '2026-04-13', [ref(inv, 3)])))).detail).to.deep.include({
      total_notas_previas: 1,
      cobertura: 'parcial',
    });
    await ours(61, '2026-04-14', { montoTotal: 690, input: { references: [ref(inv, 3)] } });
    const full = await refusal(check(note(61, '2026-04-15', [ref(inv, 3)])));
    expect(full.detail).to.deep.include({
      total_notas_previas: 2,
      monto_notas_previas: 1190,
      cobertura: 'completa',
    });
    await check(note(61, '2026-04-15', [ref(inv, 3)], { override_nota_previa: true }));
  });

  it('refuses to invoice a guía twice until the first invoice is annulled, and a devolución of anything but a guía', async () => {
    const guia = await ours(52, '2026-05-04');
    const invoice = (fecha: string) => ({ tipo_dte: 33, fecha_emision: fecha, references: [ref(guia, 0)] });
    await check(invoice('2026-05-05'));
    const first = await ours(33, '2026-05-05', { input: { references: [ref(guia, 0)] } });
    const twice = await refusal(check(invoice('2026-05-06')));
    expect(twice.code).to.equal('guia.ya_facturada');
    expect((twice.detail as { factura: { id: string } }).factura.id).to.equal(first.id);
    await ours(61, '2026-05-06', { input: { references: [ref(first, 1)] } });
    await check(invoice('2026-05-07'));

    const inv = await ours(33, '2026-05-08');
    const devolucion = {
      tipo_dte: 52,
      fecha_emision: '2026-05-09',
      despacho: { ind_traslado: 7 },
      references: [ref(inv, 0)],
    };
    expect((await refusal(check(devolucion))).code).to.equal('guia.tipo_invalido');
  });
});
