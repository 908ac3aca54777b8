/**
 * POST /boletas/batch's service (src/batch.ts) against a migrated PostgreSQL schema: a batch takes
 * contiguous folios from THE allocator and writes each boleta with its dte.commands and dte-status
 * outbox rows in one transaction; its key answers the same batch again; any invalid entry, or
 * folios not enough for all, refuses the whole batch before any folio is used.
 */
import { expect } from 'chai';
import { santiagoDate } from '@dte/engine';
import type { Principal } from '@dte/tenancy';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import {
  apiKeyPrincipal,
  insertCafRow,
  insertCertificateRow,
  insertTenant,
  type Tenant,
} from '../../../test/support/tenant-fixture';
import { batchStatus, submitBatch } from '../src';
import { refusal } from '../../../test/support/refusal';

const boleta = (rut: string, precio: number, extra: Record<string, unknown> = {}) => ({
  tipo_dte: 39,
  rut_emisor: rut,
  fecha_emision: santiagoDate(new Date()),
  items: [{ nombre: 'Pan', cantidad: 1, precio_unitario: precio, exento: false, monto_item: precio }],
  ...extra,
});

describe('boletas: a batch in one transaction', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  before(async () => {
    db = await migratedDatabase('boletas_batch');
  });
  after(() => db?.cleanup());

  /** a company with a certificate and a CAF of type 39, folios 1..hasta, and its API key's principal */
  async function company(hasta: number): Promise<{ t: Tenant; principal: Principal; cafId: string }> {
    const t = await insertTenant(db.dataSource);
    await insertCertificateRow(db.dataSource, t);
    const cafId = await insertCafRow(db.dataSource, t, 39, 1, hasta);
    return { t, principal: apiKeyPrincipal(t, ['dte:write']), cafId };
  }

  const state = async (t: Tenant) => {
    const docs: { id: string; folio: number; batch_position: number; sii_status: string; total: number }[] =
      await db.dataSource.query(
        `SELECT id, folio::int AS folio, batch_position, sii_status, monto_total::int AS total
           FROM dtes WHERE company_id = $1 ORDER BY folio`,
        [t.companyId],
      );
    const outbox: { topic: string; n: number }[] = await db.dataSource.query(
      `SELECT topic, count(*)::int AS n FROM outbox
        WHERE message_key IN (SELECT id::text FROM dtes WHERE company_id = $1) GROUP BY topic ORDER BY topic`,
      [t.companyId],
    );
    const [caf] = await db.dataSource.query(
      'SELECT next_folio::int AS next FROM cafs WHERE company_id = $1',
      [t.companyId],
    );
    return { docs, outbox, nextFolio: caf.next as number };
  };

  it('takes contiguous folios for the whole batch, writes each boleta with its outbox rows, and answers its key again', async () => {
    const { t, principal } = await company(10);
    const body = {
      batch_idempotency_key: 'lote-1',
      boletas: [boleta(t.rut, 1190), boleta(t.rut, 2380, { position: 7 }), boleta(t.rut, 595)],
    };
    const now = new Date();
    const res = await submitBatch(db.dataSource, principal, body, undefined, now);
    expect(res.queued).to.equal(3);
    const s = await state(t);
    expect(s.docs.map((d) => [d.folio, d.batch_position, d.total, d.sii_status])).to.deep.equal([
      [1, 0, 1190, 'queued'],
      [2, 7, 2380, 'queued'],
      [3, 2, 595, 'queued'],
    ]);
    expect(s.outbox).to.deep.equal([
      { topic: 'dte-status', n: 3 },
      { topic: 'dte.commands', n: 3 },
    ]);
    expect(s.nextFolio).to.equal(4);
    expect(await batchStatus(db.dataSource, { ...principal }, res.batchId)).to.deep.include({
      batchId: res.batchId,
      status: 'processing',
    });

    // the same key and body: the same batch, nothing new
    expect(await submitBatch(db.dataSource, principal, body, undefined, now)).to.deep.equal(res);
    expect((await state(t)).docs).to.have.length(3);
    // another body under that key
    const conflict = await refusal(
      submitBatch(db.dataSource, principal, { ...body, boletas: [boleta(t.rut, 100)] }, undefined, now),
    );
    expect(conflict.code).to.equal('boleta.batch.idempotency_conflict');
    expect(conflict.detail).to.deep.equal({ batchId: res.batchId });
    // another company's batch is not found
    const other = await company(5);
    expect((await refusal(batchStatus(db.dataSource, other.principal, res.batchId))).code).to.equal(
      'boleta.batch.not_found',
    );
  });

  it('refuses the whole batch for one invalid entry or a repeated position, naming each, with no folio used', async () => {
    const { t, principal } = await company(10);
    const err = await refusal(
      submitBatch(
        db.dataSource,
        principal,
        {
          batch_idempotency_key: 'lote-malo',
          boletas: [
            boleta(t.rut, 1190),
            boleta('76086428-5', 500), // another emitter
            boleta(t.rut, 700, { position: 0 }), // position of boletas[0]
            { ...boleta(t.rut, 100), items: [] },
          ],
        },
        undefined,
        new Date(),
      ),
    );
    expect(err.code).to.equal('validation_error');
    const errors = (err.detail as { errors: { index: number; code: string; path: string }[] }).errors;
    expect(errors.map((e) => [e.index, e.code])).to.deep.equal([
      [1, 'emisor_rut_mismatch'],
      [2, 'position_repeated'],
      [3, 'validation_failed'],
    ]);
    expect(errors.find((e) => e.index === 3)!.path).to.match(/^boletas\[3\]\.items/);
    const s = await state(t);
    expect(s.docs).to.deep.equal([]);
    expect(s.outbox).to.deep.equal([]);
    expect(s.nextFolio).to.equal(1);
  });

  it('refuses a batch larger than the folios left with caf_exhausted, writing none of it', async () => {
    const { t, principal } = await company(2);
    const err = await refusal(
      submitBatch(
        db.dataSource,
        principal,
        { batch_idempotency_key: 'lote-grande', boletas: [1, 2, 3].map((i) => boleta(t.rut, 100 * i)) },
        undefined,
        new Date(),
      ),
    );
    expect(err.code).to.equal('caf_exhausted');
    const s = await state(t);
    expect(s.docs).to.deep.equal([]);
    expect(s.nextFolio).to.equal(1);
    const [{ n }] = await db.dataSource.query(
      'SELECT count(*)::int AS n FROM boleta_batches WHERE company_id = $1',
      [t.companyId],
    );
    expect(n).to.equal(0);
    // two fit
    const ok = await submitBatch(
      db.dataSource,
      principal,
      { batch_idempotency_key: 'lote-justo', boletas: [boleta(t.rut, 100), boleta(t.rut, 200)] },
      undefined,
      new Date(),
    );
    expect(ok.queued).to.equal(2);
    expect((await state(t)).docs.map((d) => d.folio)).to.deep.equal([1, 2]);
  });
});
