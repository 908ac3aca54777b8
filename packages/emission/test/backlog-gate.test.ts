/**
 * The backpressure gate (src/backlog-gate.ts) against real PostgreSQL: what counts as unsent
 * (queued or signed without a track id, this company and environment only), the bound, and the
 * reuse of a count between refreshes (last count + this process's admissions, never less, so one
 * api process never admits past the bound). No pipeline runs here: the documents are
 * written as the emission leaves them (queued), by the database fixture.
 */
import { expect } from 'chai';
import { isServiceError } from '@dte/error-catalog';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import {
  insertCafRow,
  insertCertificateRow,
  insertQueuedDocument,
  insertTenant,
  type Tenant,
} from '../../../test/support/tenant-fixture';
import { BacklogGate, countUnsent } from '../src';

describe('backlog gate (503 sii_unavailable above the unsent backlog)', function () {
  this.timeout(60_000);
  let database: MigratedDatabase;
  let o: Tenant;
  const ids: string[] = [];

  /** n documents of the tenant, queued as the emission leaves them */
  const issue = async (t: Tenant, n: number) => {
    const cafId = await insertCafRow(database.dataSource, t, 33, 1, 50);
    const certificateId = await insertCertificateRow(database.dataSource, t);
    const out: string[] = [];
    for (let folio = 1; folio <= n; folio++)
      out.push(
        (await insertQueuedDocument(database.dataSource, t, { tipoDte: 33, folio, cafId, certificateId })).id,
      );
    return out;
  };

  before(async () => {
    database = await migratedDatabase('backlog_gate');
    o = await insertTenant(database.dataSource);
    ids.push(...(await issue(o, 4)));
    // another company's backlog does not count
    await issue(await insertTenant(database.dataSource), 3);
  });
  after(() => database?.cleanup());

  const db = () => database.dataSource;
  const scope = () => ({ companyId: o.companyId, environment: 'cert' as const });
  const refused = async (p: Promise<void>) => {
    try {
      await p;
    } catch (err) {
      expect(isServiceError(err) && err.code).to.equal('sii_unavailable');
      expect((err as { detail?: unknown }).detail).to.deep.equal({ retryAfterSec: 9 });
      return;
    }
    expect.fail('admitted above the bound');
  };

  it('counts queued and signed documents without a track id, of this company and environment, up to the limit', async () => {
    expect(await countUnsent(db(), scope(), 100)).to.equal(4);
    expect(await countUnsent(db(), scope(), 2)).to.equal(2);
    expect(await countUnsent(db(), { ...scope(), environment: 'prod' }, 100)).to.equal(0);
    await db().query(`UPDATE dtes SET sii_status = 'signed' WHERE id = $1`, [ids[0]]);
    expect(await countUnsent(db(), scope(), 100)).to.equal(4);
    await db().query(`UPDATE dtes SET sii_status = 'sending', track_id = '123' WHERE id = $1`, [ids[0]]);
    expect(await countUnsent(db(), scope(), 100)).to.equal(3);
    await db().query(`UPDATE dtes SET sii_status = 'emision_fallida' WHERE id = $1`, [ids[1]]);
    expect(await countUnsent(db(), scope(), 100)).to.equal(2);
  });

  it('admits up to the bound, refuses beyond it, and re-counts only after cacheMs', async () => {
    let now = 0;
    const gate = new BacklogGate({ max: 4, retryAfterSec: 9, cacheMs: 1000 }, () => now);
    // 2 unsent in the database: two more fit, counted locally without a new query
    await gate.admit(db(), scope());
    await gate.admit(db(), scope());
    await refused(gate.admit(db(), scope()));
    // documents leaving the backlog are seen at the next count, not before
    await db().query(`UPDATE dtes SET track_id = '456' WHERE id = ANY($1)`, [ids.slice(2)]);
    now = 500;
    await refused(gate.admit(db(), scope()));
    now = 1000;
    await gate.admit(db(), scope()); // re-counted: 0 unsent
    await gate.admit(db(), scope(), 3);
    await refused(gate.admit(db(), scope()));
    // a batch larger than what is left is refused whole
    now = 2000;
    await refused(gate.admit(db(), scope(), 5));
    // 0 disables the gate
    await new BacklogGate({ max: 0, retryAfterSec: 9, cacheMs: 0 }).admit(db(), scope(), 10_000);
  });
});
