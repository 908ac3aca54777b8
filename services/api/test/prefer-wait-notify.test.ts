import { expect } from 'chai';
import { PREFER_WAIT_FALLBACK_MS } from '../src/dtes/prefer-wait';
import { body, emit, orgWithCafs } from './dtes-fixtures';
import { startTestApi, type TestApi } from './support/test-api';

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
});
