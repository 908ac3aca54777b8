/**
 * Automatic stamping (src/auto-stamping.ts) against a migrated schema, real Redis and the SII
 * simulator in-process: a sweep asks the SII for folios when an enabled production type runs low,
 * once per sweep (two replicas sweeping at once ask once), and leaves alone what is not due.
 */
import { expect } from 'chai';
import { allocateFolioNow, cafInventory, runAutoStamping, setCafAuto } from '../src';
import { companyWithCertificate, startFoliosHarness, type FoliosHarness } from './support/folios-deps';

describe('automatic stamping (production, SII simulator in-process)', function () {
  this.timeout(120_000);
  let h: FoliosHarness;
  before(async () => {
    h = await startFoliosHarness({ cafRequestLockSec: 1 }, 'auto_stamping');
  });
  after(async () => h?.close());

  it('requests folios when an enabled type runs low, once per sweep, and not otherwise', async () => {
    const { tenant, principal } = await companyWithCertificate(h, {
      environment: 'prod',
      prodEnabled: true,
      prodTipos: [33],
    });
    const enrol = await fetch(`${h.sim.url}/admin/prod/companies/${tenant.rut}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ senders: [tenant.rut], fchResol: '2024-01-01', nroResol: 80 }),
    });
    expect(enrol.status).to.equal(200);
    // disabled settings and other companies are left alone
    const quiet = await companyWithCertificate(h, {
      environment: 'prod',
      prodEnabled: true,
      prodTipos: [33],
    });
    await setCafAuto(h.deps, quiet.principal, { tipo_dte: 33, enabled: false });
    const put = await setCafAuto(h.deps, principal, {
      tipo_dte: 33,
      enabled: true,
      threshold: 5,
      cantidad: 10,
    });
    expect(put).to.include({ tipo_dte: 33, enabled: true, threshold: 5, cantidad: 10, sii_env: 'prod' });

    const inventory = () => cafInventory(h.deps.dataSource, principal, 5, new Date());
    let outcomes = await runAutoStamping(h.deps, new Date());
    expect(outcomes.map((o) => ({ ...o, cafId: undefined }))).to.deep.equal([
      { companyId: tenant.companyId, tipoDte: 33, remaining: 0, result: 'granted', cafId: undefined },
    ]);
    let inv = await inventory();
    expect(inv.data.map((c) => [c.desde, c.hasta, c.sii_env, c.source])).to.deep.equal([
      [1, 10, 'prod', 'sii_request'],
    ]);
    expect(inv.data[0]!.id).to.equal(outcomes[0]!.cafId);

    expect(await runAutoStamping(h.deps, new Date())).to.deep.equal([]); // 10 left > 5
    const key = {
      organizationId: tenant.organizationId,
      companyId: tenant.companyId,
      environment: 'prod' as const,
      tipoDte: 33,
    };
    for (let i = 0; i < 6; i++) await allocateFolioNow(h.deps.dataSource, key, new Date());
    await new Promise((r) => setTimeout(r, 1100)); // the grant's request lock lapses
    outcomes = await runAutoStamping(h.deps, new Date());
    expect(outcomes).to.have.length(1);
    expect(outcomes[0]).to.include({ remaining: 4, result: 'granted' });
    inv = await inventory();
    expect(inv.summary[0]!.remaining).to.equal(14);

    // two replicas sweeping at the same moment ask the SII once
    for (let i = 0; i < 10; i++) await allocateFolioNow(h.deps.dataSource, key, new Date());
    await new Promise((r) => setTimeout(r, 1100));
    const [x, y] = await Promise.all([
      runAutoStamping(h.deps, new Date()),
      runAutoStamping(h.deps, new Date()),
    ]);
    // the slower sweep either meets the lock (skipped) or already sees the new CAF (nothing due)
    const results = [...x, ...y].map((o) => o.result);
    expect(results.filter((r) => r === 'granted')).to.have.length(1);
    expect(results.filter((r) => r !== 'granted' && r !== 'skipped')).to.deep.equal([]);
    inv = await inventory();
    expect(inv.data.length).to.equal(3);
  });

  it('refuses automatic stamping in certification, and for a type not certified in production', async () => {
    const cert = await companyWithCertificate(h);
    const inCert = await setCafAuto(h.deps, cert.principal, { tipo_dte: 33, enabled: true }).catch(
      (e: unknown) => e,
    );
    expect((inCert as { code: string }).code).to.equal('caf.auto_requires_production');
    const prod = await companyWithCertificate(h, { environment: 'prod', prodEnabled: true, prodTipos: [33] });
    const notCertified = await setCafAuto(h.deps, prod.principal, { tipo_dte: 61, enabled: true }).catch(
      (e: unknown) => e,
    );
    expect((notCertified as { code: string }).code).to.equal('caf.type_not_prod_certified');
    // disabling needs no certification
    expect(await setCafAuto(h.deps, prod.principal, { tipo_dte: 61, enabled: false })).to.include({
      enabled: false,
    });
  });
});
