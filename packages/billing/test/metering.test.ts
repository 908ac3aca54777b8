import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { chargeDocuments, ensureUsageRow, periodoOf, usageOf } from '../src';

describe('@dte/billing metering on real PostgreSQL', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  before(async () => {
    db = await migratedDatabase('billing');
  });
  after(async () => db?.cleanup());

  const allow = async (org: string, limit: number | null) => {
    await db.dataSource.query(`INSERT INTO organizations (id, name) VALUES ($1, $2)`, [org, `org-${org}`]);
    await db.dataSource.query(
      `INSERT INTO billing_allowances (organization_id, sii_env, monthly_limit, updated_by) VALUES ($1, 'prod', $2, 'test')`,
      [org, limit],
    );
  };

  it('a usage row inserted by a transaction that rolled back is not taken for existing', async () => {
    const key = { organizationId: randomUUID(), environment: 'prod' as const, now: new Date() };
    await db.dataSource
      .transaction(async (m) => {
        await ensureUsageRow(m, key);
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    await ensureUsageRow(db.dataSource, key);
    expect((await usageOf(db.dataSource, key)).rowExists).to.equal(true);
  });

  it('chargeDocuments: a charge that fits is counted; one that does not is the 402 with the counts and counts nothing', async () => {
    const org = randomUUID();
    await allow(org, 5);
    const key = { organizationId: org, environment: 'prod' as const, now: new Date() };
    expect(await db.dataSource.transaction((m) => chargeDocuments(m, key, 3))).to.equal(3);
    const err = await db.dataSource.transaction((m) => chargeDocuments(m, key, 3)).catch((e: unknown) => e);
    expect(err).to.include({ code: 'billing.free_tier_exceeded' });
    expect((err as { detail: unknown }).detail).to.deep.equal({ usedThisMonth: 3, limit: 5, requested: 3 });
    expect(await db.dataSource.transaction((m) => chargeDocuments(m, key, 2))).to.equal(5);
    expect(await usageOf(db.dataSource, key)).to.deep.equal({ usedThisMonth: 5, limit: 5, rowExists: true });
    const notices: { threshold: number; used: number }[] = await db.dataSource.query(
      `SELECT threshold, used FROM billing_notices WHERE organization_id = $1 AND periodo = $2 ORDER BY threshold`,
      [org, periodoOf(key.now)],
    );
    // 3 of 5 is 60 %: no notice; the charge to 5 crossed 80 % and 100 % at once
    expect(notices).to.deep.equal([
      { threshold: 80, used: 5 },
      { threshold: 100, used: 5 },
    ]);
  });

  it('concurrent charges in transactions never overshoot', async () => {
    const org = randomUUID();
    await allow(org, 7);
    const key = { organizationId: org, environment: 'prod' as const, now: new Date() };
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        db.dataSource
          .transaction((m) => chargeDocuments(m, key, 1))
          .then(
            () => 'ok',
            (e: { code?: string }) => e.code,
          ),
      ),
    );
    expect(results.filter((r) => r === 'ok')).to.have.length(7);
    expect(results.filter((r) => r === 'billing.free_tier_exceeded')).to.have.length(13);
    expect((await usageOf(db.dataSource, key)).usedThisMonth).to.equal(7);
  });
});
