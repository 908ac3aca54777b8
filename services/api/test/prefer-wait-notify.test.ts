import { expect } from 'chai';
import { PREFER_WAIT_FALLBACK_MS } from '../src/dtes/prefer-wait';
import { StatusWakeups } from '../src/dtes/status-wakeups';
import { body, emit, orgWithCafs } from './dtes-fixtures';
import { startTestApi, type TestApi } from './support/test-api';

interface ListenClient {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: (n: { payload?: string }) => void): unknown;
  release(): void;
}

/**
 * Prefer: wait (issue 18): a waiting request is woken by PostgreSQL's NOTIFY on its document's
 * change, not by re-reading the row on a timer. The test counts the api's reads of the row while
 * it waits: polling (200 ms, growing to 1 s) would have read it several times.
 */
describe('Prefer: wait is woken by a notification (LISTEN/NOTIFY), not by polling', function () {
  this.timeout(120_000);
  let t: TestApi;
  let reads = 0;
  before(async () => {
    t = await startTestApi();
    const ds = t.db.dataSource;
    const query = ds.query.bind(ds);
    ds.query = ((sql: string, params?: unknown[]) => {
      if (/FROM dtes WHERE id = \$1$/.test(sql.trim())) reads += 1;
      return query(sql, params);
    }) as typeof ds.query;
  });
  after(async () => t?.close());

  it('answers 201 with the track id once the uploader records it, after one read for the wake-up', async () => {
    const o = await orgWithCafs(t, { hasta: 10 });
    const started = Date.now();
    const pending = emit(t, o, body(33, o.rut, 1001), { headers: { Prefer: 'wait=60' } });
    // the document exists and its request is waiting
    let id: string | undefined;
    while (!id) {
      const rows = await t.db.dataSource.query(
        `select id from dtes where company_id = $1 order by created_at desc limit 1`,
        [o.companyId],
      );
      id = rows[0]?.id;
      if (!id) await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 1500)); // polling would have read the row ~4 times by now
    const readsWhileWaiting = reads;
    // what the sii-uploader does when the SII gives a track id
    await t.db.dataSource.query(`update dtes set track_id = '8800123' where id = $1`, [id]);
    const res = await pending;
    const elapsed = Date.now() - started;
    expect(res.status, res.text).to.equal(201);
    expect(res.headers.get('preference-applied')).to.equal('wait=60');
    expect(String((res.body as { track_id?: unknown }).track_id)).to.equal('8800123');
    // one read once LISTEN was in place, plus one per fallback period that passed (none on a quiet machine)
    const fallbacks = Math.floor(elapsed / PREFER_WAIT_FALLBACK_MS);
    expect(readsWhileWaiting, 'reads before the change').to.be.at.most(1 + fallbacks);
    expect(reads - readsWhileWaiting, 'reads after the notification').to.be.within(1, 1 + fallbacks);
  });

  it('notifies nothing for a document nobody waits for: its changes commit without the notify lock', async () => {
    const o = await orgWithCafs(t, { hasta: 10 });
    const res = await emit(t, o, body(33, o.rut, 1002));
    expect(res.status, res.text).to.equal(202);
    const id = (res.body as { id: string }).id;
    const pool = (t.db.dataSource.driver as unknown as { master: { connect(): Promise<ListenClient> } })
      .master;
    const c = await pool.connect();
    const heard: string[] = [];
    c.on('notification', (n) => heard.push(n.payload ?? ''));
    try {
      await c.query('LISTEN dte_status');
      await t.db.dataSource.query(`update dtes set track_id = '8800124' where id = $1`, [id]);
      await new Promise((r) => setTimeout(r, 500));
      expect(heard, 'nobody waits for it').to.deep.equal([]);
      const waits: unknown[] = await t.db.dataSource.query(
        `select 1 from dte_status_waits where dte_id = $1`,
        [id],
      );
      expect(waits).to.have.length(0);
      // a waiter's row makes its changes heard (what the first test's request writes before LISTEN)
      await t.db.dataSource.query(`insert into dte_status_waits (dte_id, waiter) values ($1, 'test')`, [id]);
      await t.db.dataSource.query(`update dtes set track_id = '8800125' where id = $1`, [id]);
      await new Promise((r) => setTimeout(r, 500));
      expect(heard).to.deep.equal([id]);
      await t.db.dataSource.query(`delete from dte_status_waits where dte_id = $1`, [id]);
    } finally {
      await c.query('UNLISTEN dte_status').catch(() => undefined);
      c.release();
    }
  });

  it("keeps the row of a wait that begins as the document's previous wait ends, and wakes it", async () => {
    const o = await orgWithCafs(t, { hasta: 10 });
    const res = await emit(t, o, body(33, o.rut, 1003));
    expect(res.status, res.text).to.equal(202);
    const id = (res.body as { id: string }).id;
    const ds = t.db.dataSource;
    // the ending wait's DELETE takes its time on its connection (a busy database)
    const slow = Object.create(ds) as typeof ds;
    slow.query = ((sql: string, params?: unknown[]) =>
      /DELETE FROM dte_status_waits WHERE dte_id/.test(sql)
        ? new Promise((r) => setTimeout(r, 300)).then(() => ds.query(sql, params))
        : ds.query(sql, params)) as typeof ds.query;
    const wakeups = new StatusWakeups(slow);
    const first = await wakeups.subscribe(id, () => undefined);
    first();
    let woken = 0;
    const second = await wakeups.subscribe(id, () => (woken += 1));
    try {
      await new Promise((r) => setTimeout(r, 600)); // the first wait's DELETE is done
      const rows: unknown[] = await ds.query(`select 1 from dte_status_waits where dte_id = $1`, [id]);
      expect(rows, "the second wait's row").to.have.length(1);
      await ds.query(`update dtes set track_id = '8800126' where id = $1`, [id]);
      const deadline = Date.now() + 3000;
      while (woken === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(woken, 'woken by the notification').to.be.above(0);
    } finally {
      second();
      await new Promise((r) => setTimeout(r, 600));
    }
  });

  it('leaves no row in dte_status_waits once the wait ended', async () => {
    const rows: unknown[] = await t.db.dataSource.query(`select * from dte_status_waits`);
    expect(rows).to.deep.equal([]);
  });
});
