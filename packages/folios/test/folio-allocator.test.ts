import { expect } from 'chai';
import { createDataSource } from '@dte/database';
import type { DataSource } from 'typeorm';
import { migratedDatabase, testStack, type MigratedDatabase } from '../../../test/support/env';
import { insertCafRow, insertTenant } from '../../../test/support/tenant-fixture';
import { allocateFolio, allocateFolioNow, type FolioKey } from '../src';
import { ApiError } from '@dte/error-catalog';

const DAY = 86_400_000;

/** A CAF of folios desde..hasta under the key (the fixture's row: counters only). */
function insertCaf(
  db: DataSource,
  key: FolioKey,
  desde: number,
  hasta: number,
  opts: { expiresAt?: Date | null; deleted?: boolean } = {},
): Promise<string> {
  const tenant = { ...key, rut: ruts.get(key.companyId)! };
  return insertCafRow(db, tenant, key.tipoDte, desde, hasta, opts);
}

const ruts = new Map<string, string>();

async function codeOf(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('folio allocator (PostgreSQL row lock, several connection pools)', function () {
  this.timeout(120_000);
  let db: MigratedDatabase;
  let replicas: DataSource[] = [];

  const newKey = async (tipoDte = 33, environment: 'cert' | 'prod' = 'cert'): Promise<FolioKey> => {
    const t = await insertTenant(db.dataSource);
    ruts.set(t.companyId, t.rut);
    return { organizationId: t.organizationId, companyId: t.companyId, environment, tipoDte };
  };

  before(async () => {
    const stack = await testStack();
    db = await migratedDatabase('alloc');
    // four "api replicas": separate pools on the same schema
    replicas = await Promise.all(
      [0, 1, 2, 3].map(async () =>
        createDataSource({ url: stack.databaseUrl, schema: db.schema, poolSize: 3 }).initialize(),
      ),
    );
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.destroy()));
    await db?.cleanup();
  });

  it('hands out every folio exactly once and contiguously under a race, moving CAF to CAF', async () => {
    const key = await newKey();
    const a = await insertCaf(db.dataSource, key, 1, 25);
    const b = await insertCaf(db.dataSource, key, 26, 50);
    const c = await insertCaf(db.dataSource, key, 51, 60);
    const attempts = 68; // 8 more than there are folios
    const results = await Promise.allSettled(
      Array.from({ length: attempts }, (_, i) =>
        allocateFolioNow(replicas[i % replicas.length], key, new Date()),
      ),
    );
    const ok = results
      .filter((r) => r.status === 'fulfilled')
      .map((r) => (r as PromiseFulfilledResult<{ folio: number; cafId: string }>).value);
    const failed = results
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason as ApiError);
    expect(ok.length).to.equal(60);
    expect(ok.map((r) => r.folio).sort((x, y) => x - y)).to.deep.equal(
      Array.from({ length: 60 }, (_, i) => i + 1),
    );
    for (const r of ok) expect(r.cafId).to.equal(r.folio <= 25 ? a : r.folio <= 50 ? b : c);
    expect(failed.length).to.equal(8);
    for (const e of failed) {
      expect(e.code).to.equal('caf_exhausted');
      expect(e.detail).to.deep.equal({ tipoDte: 33, nextFolio: 61 });
    }
    const counters = await db.dataSource.query(
      'SELECT next_folio FROM cafs WHERE organization_id = $1 ORDER BY desde',
      [key.organizationId],
    );
    expect(counters.map((r: { next_folio: string }) => Number(r.next_folio))).to.deep.equal([26, 51, 61]);
  });

  it('gives a folio back when the transaction that took it rolls back (no gap)', async () => {
    const key = await newKey();
    await insertCaf(db.dataSource, key, 100, 110);
    expect((await allocateFolioNow(db.dataSource, key, new Date())).folio).to.equal(100);
    await db.dataSource
      .transaction(async (m) => {
        expect((await allocateFolio(m, key, new Date())).folio).to.equal(101);
        throw new Error('document insert failed');
      })
      .catch(() => undefined);
    expect((await allocateFolioNow(db.dataSource, key, new Date())).folio).to.equal(101);
  });

  it('refuses to run outside a transaction', async () => {
    const key = await newKey();
    const err = await db.dataSource.manager
      .transaction(async () => undefined)
      .then(() => allocateFolio(db.dataSource.manager, key, new Date()))
      .catch((e: Error) => e);
    expect((err as Error).message).to.match(/inside dataSource.transaction/);
  });

  it('answers caf_not_found with detail.tipoDte when the type has no CAF', async () => {
    const key = await newKey(34);
    await insertCaf(db.dataSource, { ...key, tipoDte: 33 }, 1, 10);
    await insertCaf(db.dataSource, key, 1, 10, { deleted: true });
    const err = await codeOf(allocateFolioNow(db.dataSource, key, new Date()));
    expect(err.code).to.equal('caf_not_found');
    expect(err.detail).to.deep.equal({ tipoDte: 34 });
  });

  it('skips an expired CAF for the next one, and answers caf_expired when only expired ones are left', async () => {
    const key = await newKey(61);
    await insertCaf(db.dataSource, key, 1, 10, { expiresAt: new Date(Date.now() - DAY) });
    await insertCaf(db.dataSource, key, 11, 11, { expiresAt: new Date(Date.now() + DAY) });
    expect((await allocateFolioNow(db.dataSource, key, new Date())).folio).to.equal(11);
    const err = await codeOf(allocateFolioNow(db.dataSource, key, new Date()));
    expect(err.code).to.equal('caf_expired');
  });

  it('keeps separate sequences per environment and per organization', async () => {
    const certKey = await newKey(33, 'cert');
    const prodKey = { ...certKey, environment: 'prod' as const };
    const otherOrg = await newKey(33, 'cert');
    await insertCaf(db.dataSource, certKey, 1, 5);
    await insertCaf(db.dataSource, prodKey, 1, 5);
    await insertCaf(db.dataSource, otherOrg, 1, 5);
    expect((await allocateFolioNow(db.dataSource, certKey, new Date())).folio).to.equal(1);
    expect((await allocateFolioNow(db.dataSource, certKey, new Date())).folio).to.equal(2);
    expect((await allocateFolioNow(db.dataSource, prodKey, new Date())).folio).to.equal(1);
    expect((await allocateFolioNow(db.dataSource, otherOrg, new Date())).folio).to.equal(1);
  });
});
