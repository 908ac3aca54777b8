/**
 * Load shedding of the api's writes (src/http/inflight-limit.ts) with a real api over HTTP, real
 * PostgreSQL and Redis: beyond API_MAX_INFLIGHT writes in progress, a write is answered at once
 * with 429 rate_limit + Retry-After and has done nothing; reads, probes and metrics still answer.
 *
 * No timing: the writes are held in flight by a transaction of the test that locks the company's
 * CAF row (every emission waits for that row to take its folio), so "the cap is full" is a fact
 * the test sets up, not a race it hopes to win.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { call, type Answer, type TestApi, startTestApi } from './support/test-api';
import { body, emit, holdCompanyFolios, nextFolio, orgWithCafs, type DteOrg } from './dtes-fixtures';

// the test database's pool has 4 connections: 3 writes held at their folio leave one for the reads
const CAP = 3;
const RETRY_AFTER = 2;

describe('in-flight cap of api writes (429 rate_limit, Retry-After)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    t = await startTestApi({
      // one organization here: no share of its own (the share is tested in test/hardening/edge-limits)
      env: {
        API_MAX_INFLIGHT: String(CAP),
        API_MAX_INFLIGHT_PER_ORG: '0',
        API_INFLIGHT_RETRY_AFTER_SEC: String(RETRY_AFTER),
      },
    });
    o = await orgWithCafs(t, { tipos: [33], hasta: 300 });
  });
  after(() => t?.close());

  const root = () => t.url.replace(/\/api\/v1$/, '');
  const metricsText = async () => (await fetch(`${root()}/metrics`)).text();
  const metricValue = (text: string, series: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  const rejections = async () =>
    metricValue(await metricsText(), 'dte_http_inflight_rejections_total{method="POST"}');
  const rowsWithKey = async (keys: string[]): Promise<number> => {
    const rows: { n: string }[] = await t.db.dataSource.query(
      'SELECT count(*) AS n FROM dtes WHERE company_id = $1 AND idempotency_key = ANY($2)',
      [o.companyId, keys],
    );
    return Number(rows[0].n);
  };
  const expectRefused = (r: Answer) => {
    expect(r.status, r.text).to.equal(429);
    expect(r.body.code).to.equal('rate_limit');
    expect(r.body.detail).to.deep.equal({ retryAfterSec: RETRY_AFTER });
    expect(r.headers.get('retry-after')).to.equal(String(RETRY_AFTER));
    expect(r.body.request_id).to.be.a('string');
  };
  /** every accepted document is readable with the folio its 202 gave */
  const expectReadable = async (accepted: Answer[]) => {
    for (const r of accepted) {
      const got = await call(t.url, 'GET', `/dtes/${r.body.id as string}`, { key: o.key });
      expect(got.status, got.text).to.equal(200);
      expect(got.body.folio).to.equal(r.body.folio);
    }
  };

  const allFolios: number[] = [];

  it('with the cap full, refuses every further write at once (nothing written, no folio) while reads, probes and metrics answer', async () => {
    const folioBefore = await nextFolio(t, o, 33);
    const rejectedBefore = await rejections();
    // hold every emission of the company at its folio (its CAF rows locked outside the api's pool)
    const hold = await holdCompanyFolios(t, o);
    let held: Promise<Answer>[] = [];
    try {
      held = Array.from({ length: CAP }, (_, i) => emit(t, o, body(33, o.rut, 1000 + i)));
      // wait until the api counts them all in progress (read from GET /metrics, as Prometheus would)
      while (metricValue(await metricsText(), 'dte_http_inflight_writes') < CAP) {
        await new Promise((r) => setTimeout(r, 20));
      }

      const keys = Array.from({ length: 40 }, () => randomUUID());
      const burst = await Promise.all(keys.map((k) => emit(t, o, body(33, o.rut, 2000), { idem: k })));
      for (const r of burst) expectRefused(r);
      // any write counts, not only emission
      expectRefused(
        await call(t.url, 'POST', '/webhooks', {
          key: o.key,
          json: { url: 'https://example.com/hook', events: ['dte.accepted'] },
        }),
      );
      expect((await rejections()) - rejectedBefore).to.equal(41);

      // reads, probes and metrics are not counted and still answer while the writes are held
      expect((await fetch(`${root()}/healthz`)).status).to.equal(200);
      const ready = await fetch(`${root()}/readyz`);
      expect(ready.status, await ready.text()).to.equal(200);
      const list = await call(t.url, 'GET', '/dtes', { key: o.key });
      expect(list.status, list.text).to.equal(200);
      expect(metricValue(await metricsText(), 'dte_http_inflight_writes')).to.equal(CAP);

      // the refused requests left nothing: no row, no folio taken
      expect(await rowsWithKey(keys)).to.equal(0);
    } finally {
      await hold.release();
    }

    // the held ones complete normally, with the next folios
    const done = await Promise.all(held);
    for (const r of done) expect(r.status, r.text).to.equal(202);
    const folios = done.map((r) => r.body.folio as number).sort((a, b) => a - b);
    expect(folios).to.deep.equal(Array.from({ length: CAP }, (_, i) => folioBefore + i));
    await expectReadable(done);
    allFolios.push(...folios);
    expect(await nextFolio(t, o, 33)).to.equal(folioBefore + CAP);
  });

  it('under a burst far beyond the cap, every answer is 202 or 429; each 202 is readable with a folio of its own; refused ones left nothing and succeed when retried', async () => {
    const folioBefore = await nextFolio(t, o, 33);
    const keys = Array.from({ length: 80 }, () => randomUUID());
    const answers = await Promise.all(keys.map((k, i) => emit(t, o, body(33, o.rut, 3000 + i), { idem: k })));

    const accepted = answers.filter((r) => r.status === 202);
    const refusedKeys = keys.filter((_, i) => answers[i].status !== 202);
    for (const k of refusedKeys) expectRefused(answers[keys.indexOf(k)]);
    expect(accepted.length + refusedKeys.length).to.equal(keys.length);
    await expectReadable(accepted);
    expect(await rowsWithKey(refusedKeys)).to.equal(0);

    // retried one at a time (the cap is never reached), with the same keys: all accepted
    const retried: Answer[] = [];
    for (const k of refusedKeys) {
      const i = keys.indexOf(k);
      const r = await emit(t, o, body(33, o.rut, 3000 + i), { idem: k });
      expect(r.status, r.text).to.equal(202);
      retried.push(r);
    }
    await expectReadable(retried);

    // no folio used twice, none lost: exactly the next 80, and the CAF moved by 80
    const folios = [...accepted, ...retried].map((r) => r.body.folio as number).sort((a, b) => a - b);
    expect(folios).to.deep.equal(Array.from({ length: keys.length }, (_, i) => folioBefore + i));
    expect(await nextFolio(t, o, 33)).to.equal(folioBefore + keys.length);
    allFolios.push(...folios);
    expect(new Set(allFolios).size).to.equal(allFolios.length);
    const rows: { n: string; folios: string }[] = await t.db.dataSource.query(
      'SELECT count(*) AS n, count(DISTINCT folio) AS folios FROM dtes WHERE company_id = $1',
      [o.companyId],
    );
    expect(Number(rows[0].n)).to.equal(allFolios.length);
    expect(Number(rows[0].folios)).to.equal(allFolios.length);
  });
});
