// A typeorm migration runs in a fresh schema, and a row is written and read back; the
// processed_events table gives consumers their idempotency (a second claim of an event fails,
// a rolled-back claim leaves nothing).
import { expect } from 'chai';
import {
  ProcessedEvent,
  claimEvent,
  createDataSource,
  migrations,
  queryPrepared,
  runMigrations,
} from '@dte/database';
import { adminQuery, migratedDatabase, testStack, type MigratedDatabase } from '../support/env';

describe('foundation: database migrations and the processed_events table', function () {
  this.timeout(60000);
  let db: MigratedDatabase;

  before(async function () {
    this.timeout(240000);
    await testStack();
    db = await migratedDatabase('foundation');
  });
  after(async () => {
    await db?.cleanup();
  });

  it('applies every migration into the fresh schema, once', async () => {
    expect(db.applied).to.have.length(migrations.length);
    expect(db.applied).to.include('ProcessedEvents1763780000000');
    // Seen from a separate connection through information_schema, not through typeorm's metadata.
    const tables = await adminQuery<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [db.schema],
    );
    expect(tables.map((t) => t.table_name)).to.include.members(['migrations', 'processed_events']);
    const recorded = await adminQuery<{ name: string }>(
      `SELECT name FROM "${db.schema}".migrations ORDER BY id`,
    );
    expect(recorded.map((r) => r.name)).to.have.members(db.applied);
    expect(await runMigrations(db.dataSource)).to.deep.equal([]);
  });

  it('writes a row and reads it back', async () => {
    const repo = db.dataSource.getRepository(ProcessedEvent);
    await repo.insert({ consumer: 'foundation.test', eventId: 'evt-1' });
    const row = await repo.findOneByOrFail({ consumer: 'foundation.test', eventId: 'evt-1' });
    expect(row.processedAt).to.be.instanceOf(Date);
    expect(Math.abs(Date.now() - row.processedAt.getTime())).to.be.below(60000);
    const raw = await adminQuery<{ consumer: string; event_id: string }>(
      `SELECT consumer, event_id FROM "${db.schema}".processed_events`,
    );
    expect(raw).to.deep.equal([{ consumer: 'foundation.test', event_id: 'evt-1' }]);
  });

  it('runs a hot statement prepared once per connection, with its rows and its errors as node-postgres gives them', async () => {
    // one connection, so what it holds is what every call went through
    const ds = createDataSource({ url: process.env.DATABASE_URL!, schema: db.schema, poolSize: 1 });
    await ds.initialize();
    try {
      const insert = `INSERT INTO processed_events (consumer, event_id) VALUES ($1, $2) RETURNING consumer, event_id`;
      for (let i = 0; i < 12; i++) {
        const rows = await queryPrepared<{ consumer: string; event_id: string }>(ds, insert, [
          'prepared.test',
          `p-${i}`,
        ]);
        expect(rows).to.deep.equal([{ consumer: 'prepared.test', event_id: `p-${i}` }]);
      }
      const held: { n: number }[] = await ds.query(
        `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`,
        [insert],
      );
      expect(held[0].n, 'prepared once, reused for the 11 later calls').to.equal(1);
      let error: { code?: string; constraint?: string } | undefined;
      try {
        await queryPrepared(ds, insert, ['prepared.test', 'p-0']);
      } catch (err) {
        error = err as typeof error;
      }
      expect(error?.code).to.equal('23505');
      expect(error?.constraint).to.equal('processed_events_pkey');
      // the connection still answers, with the same prepared statement
      expect(await queryPrepared(ds, insert, ['prepared.test', 'p-after'])).to.have.length(1);
    } finally {
      await ds.destroy();
    }
  });

  it('lets a consumer claim an event once; a rolled-back claim leaves no row', async () => {
    const ds = db.dataSource;
    expect(await ds.transaction((m) => claimEvent(m, 'signer.commands', 'evt-2'))).to.equal(true);
    expect(await ds.transaction((m) => claimEvent(m, 'signer.commands', 'evt-2'))).to.equal(false);
    expect(
      await ds.transaction((m) => claimEvent(m, 'webhooks.status', 'evt-2')),
      'another consumer',
    ).to.equal(true);

    let failed = false;
    try {
      await ds.transaction(async (m) => {
        expect(await claimEvent(m, 'signer.commands', 'evt-3')).to.equal(true);
        throw new Error('the effects failed');
      });
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(
      await ds.transaction((m) => claimEvent(m, 'signer.commands', 'evt-3')),
      'claim after rollback',
    ).to.equal(true);
    let outside: Error | undefined;
    await claimEvent(ds.manager, 'x', 'y').catch((e: Error) => (outside = e));
    expect(outside?.message).to.match(/inside a transaction/);
  });
});
