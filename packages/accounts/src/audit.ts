import type { DataSource, EntityManager } from 'typeorm';

/** The security-relevant actions written to `audit_log` (one name each, stable for readers). */
export type AuditAction =
  | 'user.signup'
  | 'user.invitation_accepted'
  | 'user.password_changed'
  | 'user.password_reset_requested'
  | 'user.password_reset'
  | 'session.login'
  | 'session.login_failed'
  | 'session.locked'
  | 'session.logout'
  | 'organization.created'
  | 'organization.situacion_revalidada'
  | 'organization.production_enabled'
  | 'organization.plan_set'
  | 'organization.payment_recorded'
  | 'organization.rate_limit_set'
  | 'company.updated'
  | 'member.role_changed'
  | 'member.removed'
  | 'access_request.created'
  | 'access_request.approved'
  | 'access_request.rejected'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'api_key.rotated'
  | 'certificate.uploaded'
  | 'certificate.activated'
  | 'certificate.deleted';

export interface AuditEntry {
  organizationId: string | null;
  /** `user:<id>`, `key:<id>`, `operator:<name>` */
  actor: string;
  action: AuditAction;
  detail?: Record<string, unknown>;
  ip?: string | null;
}

export async function audit(db: DataSource | EntityManager, e: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (organization_id, actor, action, detail, ip) VALUES ($1, $2, $3, $4, $5)`,
    [e.organizationId, e.actor, e.action, JSON.stringify(e.detail ?? {}), e.ip ?? null],
  );
}

export interface AuditRecord {
  id: string;
  actor: string;
  action: string;
  detail: Record<string, unknown>;
  ip: string | null;
  at: string;
}

/** Newest first, keyset-paged by id. */
export async function readAudit(
  db: DataSource,
  organizationId: string,
  opts: { limit: number; before?: string },
): Promise<{ data: AuditRecord[]; next_cursor: string | null }> {
  const rows: (Omit<AuditRecord, 'at'> & { at: Date })[] = await db.query(
    `SELECT id::text, actor, action, detail, ip, at FROM audit_log
      WHERE organization_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY id DESC LIMIT $3`,
    [organizationId, opts.before ?? null, opts.limit + 1],
  );
  const page = rows.slice(0, opts.limit).map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
  return { data: page, next_cursor: rows.length > opts.limit ? page[page.length - 1].id : null };
}
