// A server's pool is opened and its backends' caches loaded before it reports ready, and kept
// between bursts (issue 27: the first minute after npm start refused traffic the warm system took).
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createDataSource, warmPool } from '@dte/database';
import { adminQuery, migratedDatabase, testStack, type MigratedDatabase } from '../support/env';

describe('foundation: warmPool opens every pooled connection; idleTimeoutMs keeps or closes them', function () {
  this.timeout(60000);
  let db: MigratedDatabase;

  before(async function () {
    this.timeout(240000);
    db = await migratedDatabase('poolwarm');
  });
  after(async () => db?.cleanup());

  const pool = async (idleTimeoutMs: number) => {
    const name = `warm-${randomBytes(4).toString('hex')}`;
    const ds = createDataSource({
      url: (await testStack()).databaseUrl,
      schema: db.schema,
      poolSize: 3,
      idleTimeoutMs,
      applicationName: name,
    });
    await ds.initialize();
    const open = async () =>
      (
        await adminQuery<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1`,
          [`${name}@%`],
        )
      )[0]!.n;
    return { ds, open };
  };

  it('opens the whole pool and plans over the given tables in each connection, and keeps them open', async () => {
    const { ds, open } = await pool(60_000);
    try {
      // typeorm's initialize() opened one connection to learn the server's version
      expect(await open()).to.be.at.most(1);
      await warmPool(ds, ['dtes', 'cafs', 'outbox']);
      expect(await open()).to.equal(3);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await open()).to.equal(3);
      // a table that does not exist fails the warm-up loudly (a typo would warm nothing)
      let err: unknown;
      await warmPool(ds, ['no_such_table']).catch((e) => (err = e));
      expect(String(err)).to.match(/no_such_table/);
    } finally {
      await ds.destroy();
    }
  });

  it('closes idle connections after idleTimeoutMs', async () => {
    const { ds, open } = await pool(300);
    try {
      await warmPool(ds, []);
      expect(await open()).to.be.greaterThan(0);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await open()).to.equal(0);
    } finally {
      await ds.destroy();
    }
  });
});
