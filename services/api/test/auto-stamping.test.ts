import { expect } from 'chai';
import { runAutoStamping } from '@dte/folios';
import { allocateFolioNow } from '@dte/folios';
import { call, newRut, startTestApi, uploadCert, type TestApi } from './support/test-api';

describe('automatic stamping (production, SII simulator in-process)', function () {
  this.timeout(120_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi({ env: { CAF_REQUEST_LOCK_SEC: '1' } });
  });
  after(async () => t?.close());

  it('requests folios when an enabled type runs low, once per sweep, and not otherwise', async () => {
    const rut = newRut();
    const s = await t.seed({ rut, env: 'prod', prodTipos: [33] });
    await uploadCert(t, s.api_key, rut);
    const enrol = await fetch(`${t.sim.url}/admin/prod/companies/${rut}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ senders: [rut], fchResol: '2024-01-01', nroResol: 80 }),
    });
    expect(enrol.status).to.equal(200);
    // disabled settings and other companies are left alone
    const quiet = await t.seed({ env: 'prod' });
    await call(t.url, 'PUT', '/caf/auto', { key: quiet.api_key, json: { tipo_dte: 33, enabled: false } });
    const put = await call(t.url, 'PUT', '/caf/auto', {
      key: s.api_key,
      json: { tipo_dte: 33, enabled: true, threshold: 5, cantidad: 10 },
    });
    expect(put.status).to.equal(200);

    let outcomes = await runAutoStamping(t.deps, new Date());
    expect(outcomes.map((o) => ({ ...o, cafId: undefined }))).to.deep.equal([
      { companyId: s.company_id, tipoDte: 33, remaining: 0, result: 'granted', cafId: undefined },
    ]);
    let inv = await call(t.url, 'GET', '/caf', { key: s.api_key });
    expect(
      (inv.body.data as { desde: number; hasta: number; sii_env: string; source: string }[]).map((c) => [
        c.desde,
        c.hasta,
        c.sii_env,
        c.source,
      ]),
    ).to.deep.equal([[1, 10, 'prod', 'sii_request']]);

    expect(await runAutoStamping(t.deps, new Date())).to.deep.equal([]); // 10 left > 5
    const key = {
      organizationId: s.organization_id,
      companyId: s.company_id,
      environment: 'prod' as const,
      tipoDte: 33,
    };
    for (let i = 0; i < 6; i++) await allocateFolioNow(t.db.dataSource, key, new Date());
    await new Promise((r) => setTimeout(r, 1100)); // the grant's request lock lapses
    outcomes = await runAutoStamping(t.deps, new Date());
    expect(outcomes).to.have.length(1);
    expect(outcomes[0]).to.include({ remaining: 4, result: 'granted' });
    inv = await call(t.url, 'GET', '/caf', { key: s.api_key });
    expect((inv.body.summary as { remaining: number }[])[0].remaining).to.equal(14);

    // two replicas sweeping at the same moment ask the SII once
    for (let i = 0; i < 10; i++) await allocateFolioNow(t.db.dataSource, key, new Date());
    await new Promise((r) => setTimeout(r, 1100));
    const [x, y] = await Promise.all([
      runAutoStamping(t.deps, new Date()),
      runAutoStamping(t.deps, new Date()),
    ]);
    // the slower sweep either meets the lock (skipped) or already sees the new CAF (nothing due)
    const results = [...x, ...y].map((o) => o.result);
    expect(results.filter((r) => r === 'granted')).to.have.length(1);
    expect(results.filter((r) => r !== 'granted' && r !== 'skipped')).to.deep.equal([]);
    inv = await call(t.url, 'GET', '/caf', { key: s.api_key });
    expect((inv.body.data as unknown[]).length).to.equal(3);
  });
});
