/**
 * The agents' rules against a migrated PostgreSQL schema and real Redis: a pending action's
 * lifecycle (parked, read back only by its own user's connection, decided once: a second click or
 * a second replica never runs it twice), the per-connection MCP caps, which calls need a person's
 * approval, and which connections still act (revoked or a removed member's do not). The MCP and
 * dashboard routes over them: test/agents and services/api/test.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { migratedDatabase, testStack, type MigratedDatabase } from '../../../test/support/env';
import { insertTenant, type Tenant } from '../../../test/support/tenant-fixture';
import {
  activeConnection,
  connectionPrincipal,
  createConnection,
  decidePendingAction,
  derivationNeedsApproval,
  emissionNeedsApproval,
  enforceMcpCap,
  getPendingAction,
  listPendingActions,
  parkAction,
  revokeConnection,
  type McpConnection,
} from '../src';
import { refusal } from '../../../test/support/refusal';

describe('agents: pending actions, caps and connections', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  let redis: Redis;
  before(async () => {
    db = await migratedDatabase('agents');
    redis = new Redis((await testStack()).redisUrl, { keyPrefix: `t:${randomBytes(6).toString('hex')}:` });
  });
  after(async () => {
    redis?.disconnect();
    await db?.cleanup();
  });

  /** a member of the tenant's organization and an MCP connection of theirs to its company */
  async function memberWithConnection(t: Tenant): Promise<{ userId: string; connection: McpConnection }> {
    const [user] = await db.dataSource.query('INSERT INTO users (email) VALUES ($1) RETURNING id', [
      `u-${randomBytes(4).toString('hex')}@empresa.cl`,
    ]);
    await db.dataSource.query(
      `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'member')`,
      [user.id, t.organizationId],
    );
    const id = await createConnection(db.dataSource, {
      userId: user.id,
      organizationId: t.organizationId,
      companyId: t.companyId,
      environment: 'cert',
      clientId: 'agente-contable',
      clientName: 'Agente contable',
      scopes: ['dte:read', 'dte:write'],
    });
    const connection = await activeConnection(db.dataSource, id);
    expect(connection).not.to.equal(null);
    return { userId: user.id, connection: connection! };
  }

  describe('pending actions', () => {
    it('is read back by its own user and company only, and a rejection never runs it', async () => {
      const t = await insertTenant(db.dataSource);
      const { userId, connection } = await memberWithConnection(t);
      const colleague = await memberWithConnection(t);
      const parked = await parkAction(
        db.dataSource,
        connection,
        'emitir_dte',
        { tipo_dte: 61 },
        'Nota de crédito',
      );
      expect(parked.status).to.equal('pending');
      const own = { userId, companyId: t.companyId };
      expect((await getPendingAction(db.dataSource, t.organizationId, parked.id, own)).id).to.equal(
        parked.id,
      );
      // a colleague's agent, another organization, or a malformed id: not found, the same answer
      for (const [org, id, of] of [
        [t.organizationId, parked.id, { userId: colleague.userId, companyId: t.companyId }],
        [randomUUID(), parked.id, undefined],
        [t.organizationId, 'no-uuid', undefined],
      ] as const) {
        const err = await refusal(getPendingAction(db.dataSource, org, id, of));
        expect(err.code).to.equal('pending_action_not_found');
      }

      let runs = 0;
      const run = async () => {
        runs += 1;
        return { ok: true, body: {} };
      };
      const rejected = await decidePendingAction(
        db.dataSource,
        t.organizationId,
        parked.id,
        userId,
        'reject',
        run,
      );
      expect(rejected.status).to.equal('rejected');
      // approving afterwards answers the decision as it stands
      const late = await decidePendingAction(
        db.dataSource,
        t.organizationId,
        parked.id,
        userId,
        'approve',
        run,
      );
      expect(late.status).to.equal('rejected');
      expect(runs).to.equal(0);
      expect(
        (await listPendingActions(db.dataSource, t.organizationId, 'pending')).map((p) => p.id),
      ).to.deep.equal([]);
    });

    it('runs an approved action once under two simultaneous approvals, recording its answer or its error', async () => {
      const t = await insertTenant(db.dataSource);
      const { userId, connection } = await memberWithConnection(t);
      const a = await parkAction(
        db.dataSource,
        connection,
        'emitir_dte',
        { tipo_dte: 61 },
        'Nota de crédito',
      );
      const runs: string[] = [];
      const run = async (row: { id: string; arguments: Record<string, unknown> }) => {
        runs.push(row.id);
        await new Promise((r) => setTimeout(r, 50));
        return { ok: true, body: { id: 'dte-1', folio: 7, args: row.arguments } };
      };
      const both = await Promise.all([
        decidePendingAction(db.dataSource, t.organizationId, a.id, userId, 'approve', run),
        decidePendingAction(db.dataSource, t.organizationId, a.id, userId, 'approve', run),
      ]);
      expect(runs).to.deep.equal([a.id]);
      const final = await getPendingAction(db.dataSource, t.organizationId, a.id);
      expect(final.status).to.equal('approved');
      expect(final.result).to.deep.equal({ id: 'dte-1', folio: 7, args: { tipo_dte: 61 } });
      expect(final.decided_by).to.equal(userId);
      expect(both.map((b) => b.status)).to.include('approved');

      const b = await parkAction(db.dataSource, connection, 'emitir_dte', { tipo_dte: 56 }, 'Nota de débito');
      const failed = await decidePendingAction(
        db.dataSource,
        t.organizationId,
        b.id,
        userId,
        'approve',
        async () => ({
          ok: false,
          body: { code: 'caf_exhausted' },
        }),
      );
      expect(failed).to.include({ status: 'failed' });
      expect(failed.result).to.deep.equal({ code: 'caf_exhausted' });
      const listed = await listPendingActions(db.dataSource, t.organizationId, undefined);
      expect(listed.map((p) => [p.id, p.status])).to.have.deep.members([
        [a.id, 'approved'],
        [b.id, 'failed'],
      ]);
    });
  });

  describe('MCP caps per connection and minute', () => {
    const defaults = { emit: 2, borrador: 5, reenvio: 5 };
    it("refuses over the service default or the company's own cap, per connection, until the minute turns", async () => {
      const t = await insertTenant(db.dataSource);
      const now = new Date('2026-11-20T12:00:15Z');
      const cap = (connectionId: string, at = now) =>
        enforceMcpCap(
          db.dataSource,
          redis,
          { connectionId, companyId: t.companyId, type: 'emit', defaults },
          at,
        );
      const c1 = randomUUID();
      await cap(c1);
      await cap(c1);
      const over = await refusal(cap(c1));
      expect(over.code).to.equal('mcp.emit_rate_limited');
      expect(over.detail).to.deep.include({ action_type: 'emit', limit: 2, retry_after_seconds: 45 });
      // another connection has its own count; the next minute starts again
      await cap(randomUUID());
      await cap(c1, new Date('2026-11-20T12:01:00Z'));

      // the company's own cap replaces the default
      await db.dataSource.query(`UPDATE companies SET mcp_rate_limits = '{"emit": 3}' WHERE id = $1`, [
        t.companyId,
      ]);
      const c2 = randomUUID();
      for (let i = 0; i < 3; i++) await cap(c2);
      expect((await refusal(cap(c2))).detail).to.deep.include({ limit: 3 });
      // a value that is not an integer 1..10000 is refused, nothing counted
      await db.dataSource.query(`UPDATE companies SET mcp_rate_limits = '{"emit": 0.5}' WHERE id = $1`, [
        t.companyId,
      ]);
      const invalid = await refusal(cap(randomUUID()));
      expect(invalid.code).to.equal('mcp.emit_rate_limit_invalid');
      expect(invalid.detail).to.deep.equal({ action_type: 'emit', value: 0.5 });
    });
  });

  it('asks a person to approve notes and forced rules, not a plain invoice', () => {
    expect(emissionNeedsApproval({ tipo_dte: 33 })).to.equal(false);
    expect(emissionNeedsApproval({ tipo_dte: 61 })).to.equal(true);
    expect(emissionNeedsApproval({ tipo_dte: 56 })).to.equal(true);
    expect(emissionNeedsApproval({ tipo_dte: 33, override_cedida: true })).to.equal(true);
    expect(emissionNeedsApproval({ tipo_dte: 33, override_cedida: false })).to.equal(false);
    expect(derivationNeedsApproval({ action: 'copy' })).to.equal(false);
    expect(derivationNeedsApproval({ action: 'anular' })).to.equal(true);
  });

  it("stops a revoked connection and a removed member's connection at once; acts as an oauth principal of its company", async () => {
    const t = await insertTenant(db.dataSource);
    const { userId, connection } = await memberWithConnection(t);
    expect(connectionPrincipal(connection)).to.deep.equal({
      kind: 'oauth',
      organizationId: t.organizationId,
      companyId: t.companyId,
      environment: 'cert',
      scopes: null,
      role: null,
      actorId: `mcp:${connection.id}`,
    });
    const second = await memberWithConnection(t);
    // another organization cannot revoke it
    expect(await revokeConnection(db.dataSource, randomUUID(), connection.id, null)).to.equal(false);
    expect(await activeConnection(db.dataSource, connection.id)).not.to.equal(null);
    expect(await revokeConnection(db.dataSource, t.organizationId, connection.id, userId)).to.equal(true);
    expect(await activeConnection(db.dataSource, connection.id)).to.equal(null);
    await db.dataSource.query('DELETE FROM memberships WHERE user_id = $1', [second.userId]);
    expect(await activeConnection(db.dataSource, second.connection.id)).to.equal(null);
  });
});
