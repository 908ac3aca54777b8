import { audit } from '@dte/accounts';
import type { DataSource } from 'typeorm';
import type { ApiDeps, RouteDef } from '../context';
import { generateApiKey } from '../auth/api-key-format';
import { rememberValidKey } from '../auth/rate-limit';
import type { Scope, SiiEnv } from '@dte/tenancy';
import { ApiError } from '@dte/error-catalog';
import { isUuid } from '@dte/database';
import { principalOf } from './route-kit';

const OWNER_ADMIN: ('owner' | 'admin')[] = ['owner', 'admin'];

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  environment: SiiEnv;
  scopes: string[];
  company_id: string;
  rut_emisor: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
const show = (r: KeyRow) => ({
  id: r.id,
  nombre: r.name,
  prefix: r.prefix,
  environment: r.environment,
  scopes: r.scopes,
  company_id: r.company_id,
  rut_emisor: r.rut_emisor,
  expires_at: iso(r.expires_at),
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
  created_at: iso(r.created_at),
});

const SELECT = `SELECT k.id, k.name, k.prefix, k.environment, k.scopes, k.company_id, c.rut AS rut_emisor,
                       k.expires_at, k.revoked_at, k.last_used_at, k.created_at
                  FROM api_keys k JOIN companies c ON c.id = k.company_id`;

async function keyOf(db: DataSource, org: string, id: string): Promise<KeyRow> {
  const rows: KeyRow[] = isUuid(id)
    ? await db.query(`${SELECT} WHERE k.id = $1 AND k.organization_id = $2`, [id, org])
    : [];
  if (!rows[0]) throw new ApiError('not_found', 'No API key with that id in this organization.');
  return rows[0];
}

/**
 * API keys managed from the dashboard (session only, owners and admins): create (the whole key
 * shown once), list (prefix only, with last_used_at), revoke, rotate (a new key with the same
 * name, environment, company and scopes; the old one is revoked in the same transaction).
 */
export function apiKeyAdminRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const db = deps.dataSource;
  return [
    {
      method: 'get',
      path: '/api-keys',
      operationId: 'listApiKeys',
      summary: "The organization's API keys (prefix only, never the key)",
      tag: 'api-keys',
      auth: 'session',
      roles: OWNER_ADMIN,
      responses: { 200: { description: '{data}' } },
      errors: [],
      handler: async (ctx) => {
        const rows: KeyRow[] = await db.query(
          `${SELECT} WHERE k.organization_id = $1 ORDER BY k.created_at DESC, k.id`,
          [principalOf(ctx).organizationId],
        );
        ctx.body = { data: rows.map(show) };
      },
    },
    {
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key for one environment and scopes; the key is in this answer only',
      tag: 'api-keys',
      auth: 'session',
      roles: OWNER_ADMIN,
      body: { kind: 'json', schema: 'api-key-create.schema.json' },
      responses: {
        201: { description: 'the key record plus `key`, shown once', schema: 'created-id.schema.json' },
      },
      errors: ['empresa.not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const b = ctx.state.body as {
          nombre: string;
          environment: SiiEnv;
          scopes: Scope[];
          company_id?: string;
          expires_in_days?: number;
        };
        const companies: { id: string }[] = await db.query(
          `SELECT id FROM companies WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY created_at LIMIT 2`,
          [p.organizationId, b.company_id ?? null],
        );
        if (!companies[0] || (!b.company_id && companies.length > 1)) {
          throw new ApiError(
            'empresa.not_found',
            b.company_id
              ? 'No such company in this organization.'
              : 'Say company_id: the organization has several companies.',
          );
        }
        const k = generateApiKey(b.environment);
        const expires = b.expires_in_days ? new Date(now().getTime() + b.expires_in_days * 86400_000) : null;
        const row = await db.transaction(async (m) => {
          const r: { id: string }[] = await m.query(
            `INSERT INTO api_keys (organization_id, company_id, environment, name, prefix, key_hash, scopes, expires_at, created_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
            [
              p.organizationId,
              companies[0].id,
              b.environment,
              b.nombre,
              k.prefix,
              k.hash,
              b.scopes,
              expires,
              p.userId,
            ],
          );
          await audit(m, {
            organizationId: p.organizationId,
            actor: p.actorId,
            action: 'api_key.created',
            detail: { api_key_id: r[0].id, prefix: k.prefix, environment: b.environment, scopes: b.scopes },
            ip: ctx.ip,
          });
          return r[0];
        });
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        // a new key is known at once: failures of others at its address never refuse it (rate-limit.ts)
        await rememberValidKey(deps.redis, k.hash).catch(() => undefined);
        ctx.body = { ...show(await keyOf(db, p.organizationId, row.id)), key: k.key };
      },
    },
    {
      method: 'post',
      path: '/api-keys/:id/revoke',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key at once (401 api_key_revoked from then on)',
      tag: 'api-keys',
      auth: 'session',
      roles: OWNER_ADMIN,
      responses: { 200: { description: 'the revoked key' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const k = await keyOf(db, p.organizationId, ctx.params.id);
        if (!k.revoked_at) {
          await db.transaction(async (m) => {
            await m.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
              k.id,
              now(),
            ]);
            await audit(m, {
              organizationId: p.organizationId,
              actor: p.actorId,
              action: 'api_key.revoked',
              detail: { api_key_id: k.id, prefix: k.prefix },
              ip: ctx.ip,
            });
          });
        }
        ctx.body = show(await keyOf(db, p.organizationId, k.id));
      },
    },
    {
      method: 'post',
      path: '/api-keys/:id/rotate',
      operationId: 'rotateApiKey',
      summary: 'Replace an API key by a new one with the same settings; the old one is revoked at once',
      tag: 'api-keys',
      auth: 'session',
      roles: OWNER_ADMIN,
      responses: {
        201: { description: 'the new key record plus `key`, shown once', schema: 'created-id.schema.json' },
      },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const old = await keyOf(db, p.organizationId, ctx.params.id);
        if (old.revoked_at) throw new ApiError('not_found', 'That API key is revoked; create a new one.');
        const k = generateApiKey(old.environment);
        const id = await db.transaction(async (m) => {
          const done = await m.query(
            'UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL',
            [old.id, now()],
          );
          if (Array.isArray(done) && done[1] === 0)
            throw new ApiError('not_found', 'That API key was revoked meanwhile.');
          const r: { id: string }[] = await m.query(
            `INSERT INTO api_keys (organization_id, company_id, environment, name, prefix, key_hash, scopes, expires_at, created_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
            [
              p.organizationId,
              old.company_id,
              old.environment,
              old.name,
              k.prefix,
              k.hash,
              old.scopes,
              old.expires_at,
              p.userId,
            ],
          );
          await audit(m, {
            organizationId: p.organizationId,
            actor: p.actorId,
            action: 'api_key.rotated',
            detail: { old_api_key_id: old.id, api_key_id: r[0].id, prefix: k.prefix },
            ip: ctx.ip,
          });
          return r[0].id;
        });
        ctx.status = 201;
        ctx.set('Cache-Control', 'no-store');
        // a new key is known at once: failures of others at its address never refuse it (rate-limit.ts)
        await rememberValidKey(deps.redis, k.hash).catch(() => undefined);
        ctx.body = { ...show(await keyOf(db, p.organizationId, id)), key: k.key };
      },
    },
  ];
}
