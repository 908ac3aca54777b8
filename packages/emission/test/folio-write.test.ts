/**
 * writeManyWithFolios (src/folio-write.ts), the one statement that takes folios from THE allocator
 * and writes the documents with them, against real PostgreSQL from several connection pools ("api
 * replicas"): every folio once and contiguous across CAFs, each document's folio in its XML draft,
 * feed and outbox messages; folios running out write what fits and then nothing, and
 * emissionRefused says why. The HTTP side (coalesced POST /dtes, Idempotency-Key):
 * services/api/test/emission-coalescing.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createDataSource, isUniqueViolation } from '@dte/database';
import { santiagoDate } from '@dte/engine';
import { ApiError } from '@dte/error-catalog';
import type { DataSource } from 'typeorm';
import { migratedDatabase, testStack, type MigratedDatabase } from '../../../test/support/env';
import {
  insertCafRow,
  insertCertificateRow,
  insertTenant,
  type Tenant,
} from '../../../test/support/tenant-fixture';
import { emissionRefused, writeManyWithFolios, type NewDocument } from '../src';

describe('writeManyWithFolios: folios and documents in one statement', function () {
  this.timeout(120_000);
  let db: MigratedDatabase;
  before(async () => {
    db = await migratedDatabase('folio_write');
  });
  after(() => db?.cleanup());

  /** The company's documents with what the pipeline and the feed got of each. */
  async function written(o: Tenant) {
    return (await db.dataSource.query(
      `SELECT d.id, d.folio::int AS folio, d.caf_id, d.sii_status,
              (d.document #>> '{Encabezado,IdDoc,Folio}')::int AS document_folio,
              (SELECT count(*)::int FROM dte_events e WHERE e.dte_id = d.id AND e.sii_status = 'queued') AS queued_feed,
              (SELECT json_agg(json_build_object('topic', x.topic, 'folio', (x.payload->>'folio')::int,
                                                 'caf_id', x.payload->>'caf_id'))
                 FROM outbox x WHERE x.message_key = d.id::text) AS messages
         FROM dtes d WHERE d.company_id = $1 ORDER BY d.folio`,
      [o.companyId],
    )) as {
      id: string;
      folio: number;
      caf_id: string;
      sii_status: string;
      document_folio: number;
      queued_feed: number;
      messages: { topic: string; folio: number; caf_id: string | null }[];
    }[];
  }

  const documentOf =
    (o: Tenant, certificateId: string) =>
    (i: number): { doc: NewDocument; draft: unknown } => ({
      doc: {
        id: randomUUID(),
        organizationId: o.organizationId,
        companyId: o.companyId,
        environment: 'cert',
        tipoDte: 33,
        certificateId,
        rutEmisor: o.rut,
        rutReceptor: null,
        razonSocialReceptor: 'CLIENTE',
        fechaEmision: santiagoDate(new Date()),
        amounts: { neto: 100, exento: 0, iva: 19, total: 119 },
        input: { n: i },
        idempotencyKey: randomUUID(),
        bodyHash: `h${i}`,
        now: new Date(),
      },
      draft: { Encabezado: { IdDoc: { Folio: 0 } } },
    });

  it('several api replicas writing batches at once: every folio once, none skipped, across CAFs', async () => {
    const o = await insertTenant(db.dataSource);
    const a = await insertCafRow(db.dataSource, o, 33, 1, 37);
    const b = await insertCafRow(db.dataSource, o, 33, 38, 200);
    const doc = documentOf(o, await insertCertificateRow(db.dataSource, o));
    // four "api replicas": pools of their own on the test's schema, each writing batches of 5
    const replicas: DataSource[] = await Promise.all(
      [0, 1, 2, 3].map(async () =>
        createDataSource({
          url: (await testStack()).databaseUrl,
          schema: db.schema,
          poolSize: 3,
          entities: [],
          migrations: [],
        }).initialize(),
      ),
    );
    try {
      // 4 replicas × 6 rounds × 5 documents = 120, with the first CAF's 37 folios running out midway
      const byReplica = await Promise.all(
        replicas.map(async (r, k) => {
          const rows = [];
          for (let round = 0; round < 6; round++) {
            let batch = Array.from({ length: 5 }, (_, j) => doc(k * 100 + round * 10 + j));
            while (batch.length > 0) {
              const got = await writeManyWithFolios(r, batch);
              expect(got.length, 'a statement gave no folio while folios were left').to.be.above(0);
              rows.push(...got);
              const done = new Set(got.map((g) => g.id));
              batch = batch.filter((x) => !done.has(x.doc.id));
            }
          }
          return rows;
        }),
      );
      const folios = byReplica.flat().map((r) => Number(r.folio));
      expect(folios.sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 120 }, (_, i) => i + 1));
      const rows = await written(o);
      expect(rows.map((r) => r.folio)).to.deep.equal(Array.from({ length: 120 }, (_, i) => i + 1));
      for (const r of rows) {
        expect(r.caf_id).to.equal(r.folio <= 37 ? a : b);
        expect(r.document_folio).to.equal(r.folio);
        expect(r.sii_status).to.equal('queued');
        expect(r.queued_feed).to.equal(1);
        expect(r.messages.map((m) => m.topic).sort()).to.deep.equal(['dte-status', 'dte.commands']);
        for (const m of r.messages) expect(m.folio).to.equal(r.folio);
        expect(r.messages.find((m) => m.topic === 'dte.commands')!.caf_id).to.equal(r.caf_id);
      }
      const counters: { next_folio: string }[] = await db.dataSource.query(
        'SELECT next_folio FROM cafs WHERE company_id = $1 ORDER BY desde',
        [o.companyId],
      );
      expect(counters.map((c) => Number(c.next_folio))).to.deep.equal([38, 121]);
    } finally {
      await Promise.all(replicas.map((r) => r.destroy()));
    }
  });

  it('writes the first documents the last folios fit, then nothing, and emissionRefused answers caf_exhausted', async () => {
    const o = await insertTenant(db.dataSource);
    await insertCafRow(db.dataSource, o, 33, 1, 3);
    const doc = documentOf(o, await insertCertificateRow(db.dataSource, o));
    const batch = Array.from({ length: 5 }, (_, i) => doc(i));
    const got = await writeManyWithFolios(db.dataSource, batch);
    // in the order given: the first three documents, folios 1..3
    expect(got.map((r) => [r.id, Number(r.folio)])).to.deep.equal(
      batch.slice(0, 3).map((x, i) => [x.doc.id, i + 1]),
    );
    expect(await writeManyWithFolios(db.dataSource, batch.slice(3))).to.deep.equal([]);
    const rows = await written(o);
    expect(rows.map((r) => r.folio)).to.deep.equal([1, 2, 3]);
    const [{ n }]: { n: number }[] = await db.dataSource.query(
      'SELECT count(*)::int AS n FROM outbox WHERE message_key = ANY($1)',
      [batch.slice(3).map((x) => x.doc.id)],
    );
    expect(n, 'no message of a document not written').to.equal(0);
    const key = {
      organizationId: o.organizationId,
      companyId: o.companyId,
      environment: 'cert' as const,
      tipoDte: 33,
    };
    const err = await emissionRefused(db.dataSource, key, new Date()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).code).to.equal('caf_exhausted');
  });

  it('refuses a second document under one Idempotency-Key of the company, writing nothing of the statement', async () => {
    const o = await insertTenant(db.dataSource);
    await insertCafRow(db.dataSource, o, 33, 1, 10);
    const doc = documentOf(o, await insertCertificateRow(db.dataSource, o));
    const first = doc(1);
    expect(await writeManyWithFolios(db.dataSource, [first])).to.have.length(1);
    const again = { ...doc(2), doc: { ...doc(2).doc, idempotencyKey: first.doc.idempotencyKey } };
    const err = await writeManyWithFolios(db.dataSource, [doc(3), again]).catch((e: unknown) => e);
    expect(isUniqueViolation(err, 'dtes_company_env_idempotency_key_uq'), String(err)).to.equal(true);
    expect((await written(o)).map((r) => r.folio)).to.deep.equal([1]);
    // the folios of the refused statement were not taken
    expect(Number((await writeManyWithFolios(db.dataSource, [doc(4)]))[0]!.folio)).to.equal(2);
  });
});
