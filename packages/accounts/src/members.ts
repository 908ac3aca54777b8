import type { DataSource } from 'typeorm';

export interface MemberRecord {
  user_id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'member';
  since: string;
}

export async function listMembers(db: DataSource, orgId: string): Promise<MemberRecord[]> {
  const rows: (Omit<MemberRecord, 'since'> & { since: Date })[] = await db.query(
    `SELECT u.id AS user_id, u.email, u.name, m.role, m.created_at AS since FROM memberships m
       JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1
      ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.email`,
    [orgId],
  );
  return rows.map((r) => ({ ...r, since: new Date(r.since).toISOString() }));
}
