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
  /** who, readable: "Name (e-mail)" of a user, «name» of an API key; null when unknown */
  actor_nombre: string | null;
  action: string;
  /** on what, readable: the certificate, API key, member or document the detail names */
  objeto: string | null;
  detail: Record<string, unknown>;
  ip: string | null;
  at: string;
}

/** A uuid held in text (actor suffix, detail field), or NULL: a malformed value never fails the read. */
const uuidOf = (expr: string) =>
  `(CASE WHEN ${expr} ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (${expr})::uuid END)`;

/**
 * Newest first (by the bigserial id, compared as a number), keyset-paged by id: `before` is the
 * last id of the previous page, so no entry is skipped or repeated. Each entry carries who did it
 * and on what in words (names resolved within the organization only).
 */
export async function readAudit(
  db: DataSource,
  organizationId: string,
  opts: { limit: number; before?: string },
): Promise<{ data: AuditRecord[]; next_cursor: string | null }> {
  const rows: (Omit<AuditRecord, 'at'> & { at: Date })[] = await db.query(
    `SELECT a.id::text AS id, a.actor, a.action, a.detail, a.ip, a.at,
            CASE
              WHEN a.actor LIKE 'user:%' THEN (SELECT CASE WHEN u.name IS NOT NULL AND u.name <> ''
                                                           THEN u.name || ' (' || u.email || ')' ELSE u.email END
                                                 FROM users u WHERE u.id = ${uuidOf('substr(a.actor, 6)')})
              WHEN a.actor LIKE 'key:%' THEN (SELECT 'API key «' || k.name || '»' FROM api_keys k
                                                WHERE k.id = ${uuidOf('substr(a.actor, 5)')} AND k.organization_id = a.organization_id)
              WHEN a.actor LIKE 'operator:%' THEN 'Operador ' || substr(a.actor, 10)
            END AS actor_nombre,
            COALESCE(
              (SELECT 'Certificado «' || c.label || '»' FROM certificates c
                WHERE c.id = ${uuidOf("a.detail->>'certificate_id'")} AND c.organization_id = a.organization_id),
              (SELECT 'API key «' || k.name || '»' FROM api_keys k
                WHERE k.id = ${uuidOf("a.detail->>'api_key_id'")} AND k.organization_id = a.organization_id),
              (SELECT u.email FROM users u
                WHERE u.id = ${uuidOf("COALESCE(a.detail->>'user_id', a.detail->>'requester')")}),
              (SELECT 'Documento tipo ' || d.tipo_dte || ' N° ' || d.folio FROM dtes d
                WHERE d.id = ${uuidOf("a.detail->>'dte_id'")} AND d.organization_id = a.organization_id)
            ) AS objeto
       FROM audit_log a
      WHERE a.organization_id = $1 AND ($2::bigint IS NULL OR a.id < $2::bigint)
      ORDER BY a.id DESC LIMIT $3`,
    [organizationId, opts.before ?? null, opts.limit + 1],
  );
  const page = rows.slice(0, opts.limit).map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
  return { data: page, next_cursor: rows.length > opts.limit ? page[page.length - 1].id : null };
}
