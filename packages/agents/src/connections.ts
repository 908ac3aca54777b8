import { returnedRows } from '@dte/database';
import type { DataSource } from 'typeorm';
import type { GrantableCompany, NewConnection } from '@dte/oauth-server';
import type { Principal } from '@dte/tenancy';

/** One consent: the subject of the OAuth tokens, bound to user, organization, company and environment. */
export interface McpConnection {
  id: string;
  user_id: string;
  organization_id: string;
  company_id: string;
  environment: 'cert' | 'prod';
  client_id: string;
  scopes: string[];
  revoked_at: Date | null;
}

/** The companies of every organization the user is a member of. */
export async function grantableCompanies(db: DataSource, userId: string): Promise<GrantableCompany[]> {
  const rows: { organization_id: string; name: string; id: string; rut: string; razon_social: string }[] =
    await db.query(
      `SELECT o.id AS organization_id, o.name, c.id, c.rut, c.razon_social
         FROM memberships m JOIN organizations o ON o.id = m.organization_id
         JOIN companies c ON c.organization_id = o.id
        WHERE m.user_id = $1 ORDER BY o.name, c.razon_social`,
      [userId],
    );
  return rows.map((r) => ({
    organizationId: r.organization_id,
    organizationName: r.name,
    companyId: r.id,
    rut: r.rut,
    razonSocial: r.razon_social,
  }));
}

export async function createConnection(db: DataSource, c: NewConnection): Promise<string> {
  const rows: { id: string }[] = await db.query(
    `INSERT INTO mcp_connections (user_id, organization_id, company_id, environment, client_id, client_name, scopes)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [c.userId, c.organizationId, c.companyId, c.environment, c.clientId, c.clientName, c.scopes],
  );
  return rows[0].id;
}

/**
 * The connection of a token, only while its user is still a member of the organization (a
 * removed member's agents stop at once) and the connection is not revoked.
 */
export async function activeConnection(db: DataSource, id: string): Promise<McpConnection | null> {
  const rows: McpConnection[] = await db.query(
    `SELECT k.id, k.user_id, k.organization_id, k.company_id, k.environment, k.client_id, k.scopes, k.revoked_at
       FROM mcp_connections k
       JOIN memberships m ON m.user_id = k.user_id AND m.organization_id = k.organization_id
      WHERE k.id = $1 AND k.revoked_at IS NULL`,
    [id],
  );
  return rows[0] ?? null;
}

/** The principal the service functions see for a call made over this connection. */
export function connectionPrincipal(c: McpConnection): Principal {
  return {
    kind: 'oauth',
    organizationId: c.organization_id,
    companyId: c.company_id,
    environment: c.environment,
    scopes: null,
    role: null,
    actorId: `mcp:${c.id}`,
  };
}

/** A connection as its owners see it (GET /mcp-connections). */
export interface ConnectionRecord {
  id: string;
  client_id: string;
  client_name: string | null;
  user_id: string;
  user_email: string;
  company_id: string;
  company_rut: string;
  company_razon_social: string;
  sii_env: 'cert' | 'prod';
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/**
 * The organization's MCP connections, newest first (at most 200); `onlyUserId` narrows them to
 * one user's (a member sees only their own agents). Revoked ones stay listed with revoked_at.
 */
export async function listConnections(
  db: DataSource,
  organizationId: string,
  onlyUserId: string | null,
): Promise<ConnectionRecord[]> {
  const rows: (Omit<ConnectionRecord, 'created_at' | 'last_used_at' | 'revoked_at'> & {
    created_at: Date;
    last_used_at: Date | null;
    revoked_at: Date | null;
  })[] = await db.query(
    `SELECT k.id, k.client_id, k.client_name, k.user_id, u.email AS user_email, k.company_id,
            c.rut AS company_rut, c.razon_social AS company_razon_social, k.environment AS sii_env,
            k.scopes, k.created_at, k.revoked_at,
            (SELECT max(a.created_at) FROM mcp_audit_log a WHERE a.connection_id = k.id) AS last_used_at
       FROM mcp_connections k JOIN users u ON u.id = k.user_id JOIN companies c ON c.id = k.company_id
      WHERE k.organization_id = $1 AND ($2::uuid IS NULL OR k.user_id = $2)
      ORDER BY k.created_at DESC, k.id LIMIT 200`,
    [organizationId, onlyUserId],
  );
  return rows.map((r) => ({
    ...r,
    created_at: iso(r.created_at)!,
    last_used_at: iso(r.last_used_at),
    revoked_at: iso(r.revoked_at),
  }));
}

/**
 * Revokes one connection of the organization (of `onlyUserId` when given): its access tokens stop
 * at once (every call checks the connection) and its refresh token answers invalid_grant (the
 * authorization server no longer finds the subject). Revoking twice is a no-op. False when the
 * connection is not the organization's (or not the user's).
 */
export async function revokeConnection(
  db: DataSource,
  organizationId: string,
  id: string,
  onlyUserId: string | null,
): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `UPDATE mcp_connections SET revoked_at = coalesce(revoked_at, now())
      WHERE id = $1 AND organization_id = $2 AND ($3::uuid IS NULL OR user_id = $3) RETURNING id`,
    [id, organizationId, onlyUserId],
  );
  return returnedRows<{ id: string }>(rows).length > 0;
}
