import type { DataSource } from 'typeorm';
import type { GrantableCompany, NewConnection } from '@dte/oauth-server';
import type { Principal } from '../context';

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
