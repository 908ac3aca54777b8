import { ServiceError } from '@dte/error-catalog';
import type { DataSource, EntityManager } from 'typeorm';
import { audit } from './audit';

export interface MemberRecord {
  user_id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'member';
  since: string;
}

export function listMembers(db: DataSource, orgId: string): Promise<MemberRecord[]> {
  return listMembersIn(db, orgId);
}

async function listMembersIn(db: DataSource | EntityManager, orgId: string): Promise<MemberRecord[]> {
  const rows: (Omit<MemberRecord, 'since'> & { since: Date })[] = await db.query(
    `SELECT u.id AS user_id, u.email, u.name, m.role, m.created_at AS since FROM memberships m
       JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1
      ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.email`,
    [orgId],
  );
  return rows.map((r) => ({ ...r, since: new Date(r.since).toISOString() }));
}

/**
 * An owner changes a member's role or removes them. The last owner can be neither demoted nor
 * removed (validation_failed): an organization always keeps an owner. A removed member's API keys
 * (those they created in the organization) are revoked in the same transaction. Audited; answers
 * the member's new state (null when removed).
 */
export async function changeMember(
  db: DataSource,
  input: { orgId: string; actorUserId: string; userId: string; role: 'owner' | 'admin' | 'member' | null },
  ip: string | null,
): Promise<MemberRecord | null> {
  return db.transaction(async (m) => {
    const rows: { user_id: string; role: string }[] = await m.query(
      'SELECT user_id, role FROM memberships WHERE organization_id = $1 ORDER BY user_id FOR UPDATE',
      [input.orgId],
    );
    const target = rows.find((r) => r.user_id === input.userId);
    if (!target) throw new ServiceError('not_found', 'No such member in this organization.');
    const owners = rows.filter((r) => r.role === 'owner').length;
    if (target.role === 'owner' && input.role !== 'owner' && owners === 1) {
      throw new ServiceError('validation_failed', 'The organization must keep at least one owner.', {
        issues: [{ path: '/rol', message: 'the last owner cannot be demoted or removed' }],
      });
    }
    let keysRevoked = 0;
    if (input.role === null) {
      await m.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
        input.orgId,
        input.userId,
      ]);
      // the API keys they created in this organization stop with them (a removed member keeps
      // no access through a key they kept a copy of)
      const [revoked]: { n: number }[] = await m.query(
        `WITH r AS (UPDATE api_keys SET revoked_at = now()
           WHERE organization_id = $1 AND created_by = $2 AND revoked_at IS NULL RETURNING id)
         SELECT count(*)::int AS n FROM r`,
        [input.orgId, input.userId],
      );
      keysRevoked = revoked?.n ?? 0;
    } else {
      await m.query('UPDATE memberships SET role = $3 WHERE organization_id = $1 AND user_id = $2', [
        input.orgId,
        input.userId,
        input.role,
      ]);
    }
    await audit(m, {
      organizationId: input.orgId,
      actor: `user:${input.actorUserId}`,
      action: input.role === null ? 'member.removed' : 'member.role_changed',
      detail: {
        user_id: input.userId,
        from: target.role,
        to: input.role,
        ...(input.role === null ? { api_keys_revoked: keysRevoked } : {}),
      },
      ip,
    });
    if (input.role === null) return null;
    const [rec] = (await listMembersIn(m, input.orgId)).filter((x) => x.user_id === input.userId);
    return rec ?? null;
  });
}
