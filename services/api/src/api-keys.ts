import type { DataSource } from 'typeorm';
import { generateApiKey } from './auth/api-key-format';
import type { Scope, SiiEnv } from '@dte/tenancy';

export interface ApiKeyInfo {
  id: string;
  prefix: string;
  environment: SiiEnv;
  name: string;
  scopes: Scope[];
  company_id: string;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/**
 * The scopes of a key created without `--scopes`: reading documents only (least privilege).
 * Issuing, certificates, CAFs and webhooks are granted only when asked for.
 */
export const DEFAULT_API_KEY_SCOPES: readonly Scope[] = ['dte:read'];

/** Creates a key for a company; the whole key is returned once and only its hash is kept. */
export async function createApiKey(
  db: DataSource,
  input: { companyId: string; environment: SiiEnv; name: string; scopes?: Scope[]; expiresAt?: Date | null },
): Promise<{ key: string; id: string; prefix: string }> {
  const k = generateApiKey(input.environment);
  const rows: { id: string }[] = await db.query(
    `INSERT INTO api_keys (organization_id, company_id, environment, name, prefix, key_hash, scopes, expires_at)
     SELECT organization_id, id, $2, $3, $4, $5, $6, $7 FROM companies WHERE id = $1
     RETURNING id`,
    [
      input.companyId,
      input.environment,
      input.name,
      k.prefix,
      k.hash,
      input.scopes ?? [...DEFAULT_API_KEY_SCOPES],
      input.expiresAt ?? null,
    ],
  );
  if (!rows[0]) throw new Error(`no company ${input.companyId}`);
  return { key: k.key, id: rows[0].id, prefix: k.prefix };
}

export async function listApiKeys(db: DataSource, organizationId: string): Promise<ApiKeyInfo[]> {
  const rows = await db.query(
    `SELECT id, prefix, environment, name, scopes, company_id, expires_at, revoked_at, created_at
       FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id`,
    [organizationId],
  );
  return rows.map(
    (r: ApiKeyInfo & { expires_at: Date | null; revoked_at: Date | null; created_at: Date }) => ({
      ...r,
      expires_at: iso(r.expires_at),
      revoked_at: iso(r.revoked_at),
      created_at: iso(r.created_at)!,
    }),
  );
}

/** Revokes a key by id or by its display prefix; answers how many keys were revoked now. */
export async function revokeApiKey(db: DataSource, idOrPrefix: string, now = new Date()): Promise<number> {
  const byId = /^[0-9a-f-]{36}$/i.test(idOrPrefix);
  const result = await db.query(
    `UPDATE api_keys SET revoked_at = $2 WHERE ${byId ? 'id = $1::uuid' : 'prefix = $1'} AND revoked_at IS NULL`,
    [idOrPrefix, now],
  );
  return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
}
