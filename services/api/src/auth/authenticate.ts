import type { Context } from 'koa';
import { queryPrepared } from '@dte/database';
import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import { apiKeyPrefix, hashApiKey, parseApiKey } from './api-key-format';
import type { PresentedKey } from './rate-limit';
import {
  isScope,
  type MemberRole,
  type Principal,
  type PrincipalPreload,
  type Scope,
  type SiiEnv,
} from '@dte/tenancy';
import type { SessionStore } from '@dte/accounts';

interface KeyRow {
  id: string;
  organization_id: string;
  company_id: string;
  environment: SiiEnv;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  rate_limit_max: number | null;
  preload?: unknown;
}

/** last_used_at is written at most once a minute per key, so reads stay cheap. */
const LAST_USED_RESOLUTION_MS = 60_000;

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * The API key an `Authorization: Bearer <key>` header presents: its hash (what its api_keys row is
 * found by) and display prefix (what failed authentications are counted by), or undefined when
 * the header holds no well-formed key (authenticateApiKey then answers why, without a lookup).
 */
export function presentedKey(header: string | undefined): PresentedKey | undefined {
  const m = header ? BEARER.exec(header) : null;
  return m && parseApiKey(m[1]!) ? { hash: hashApiKey(m[1]!), prefix: apiKeyPrefix(m[1]!) } : undefined;
}

/**
 * Resolves `Authorization: Bearer <key>` to its key, with the spec's 401 codes; `preload` is read
 * in the same statement (Principal.preloaded).
 */
export async function authenticateApiKey(
  db: DataSource,
  header: string,
  now: Date,
  preload?: PrincipalPreload,
): Promise<Principal> {
  const m = BEARER.exec(header);
  if (!m) {
    throw new ApiError('unauthorized', 'Send the API key as Authorization: Bearer <API_KEY>.', {
      hint: 'The Authorization header must use the Bearer scheme.',
    });
  }
  const key = m[1];
  const invalid = () =>
    new ApiError('invalid_api_key', 'No active API key matches the one sent.', {
      hint: 'API keys look like sk_cert_… or sk_prod_…; create a new one if this one was lost.',
    });
  if (!parseApiKey(key)) throw invalid();
  // every API request runs it: prepared once per connection (a unique index fixes its plan)
  const rows = await queryPrepared<KeyRow>(
    db,
    `SELECT k.id, k.organization_id, k.company_id, k.environment, k.scopes, k.expires_at, k.revoked_at,
            k.last_used_at,
            (SELECT o.rate_limit_max FROM organizations o WHERE o.id = k.organization_id) AS rate_limit_max${preload ? `, ${preload.sql} AS preload` : ''}
       FROM api_keys k WHERE k.key_hash = $1`,
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (!row) throw invalid();
  if (row.revoked_at) {
    throw new ApiError('api_key_revoked', 'This API key was revoked.', {
      detail: { revokedAt: new Date(row.revoked_at).toISOString() },
    });
  }
  if (row.expires_at && new Date(row.expires_at).getTime() <= now.getTime()) {
    throw new ApiError('api_key_expired', 'This API key has expired.', {
      detail: { expiredAt: new Date(row.expires_at).toISOString() },
    });
  }
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() >= LAST_USED_RESOLUTION_MS) {
    await db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [row.id, now]);
  }
  return {
    kind: 'api_key',
    organizationId: row.organization_id,
    companyId: row.company_id,
    environment: row.environment,
    scopes: new Set(row.scopes.filter(isScope)),
    role: null,
    actorId: `key:${row.id}`,
    rateLimitMax: row.rate_limit_max,
    ...(preload ? { preloaded: { value: row.preload ?? null } } : {}),
  };
}

/**
 * Resolves the dashboard session cookie (an id of a Redis session, see session.ts). The role
 * comes from the membership row, not the session. The environment of a session request is the
 * `sii_env` query parameter (cert by default). `requireOrg` false (routes with auth
 * 'session_user': sign-out, onboarding) lets a session without organization through, with an
 * empty organizationId and no role.
 */
export async function authenticateSession(
  db: DataSource,
  sessions: SessionStore,
  sessionId: string,
  now: Date,
  envParam: string | undefined,
  requireOrg = true,
): Promise<Principal> {
  const s = await sessions.get(sessionId, now);
  if (!s) {
    throw new ApiError('unauthorized', 'The session is invalid or has expired; sign in again.', {
      hint: 'Or send an API key as Authorization: Bearer <API_KEY>.',
    });
  }
  if (envParam !== undefined && envParam !== 'cert' && envParam !== 'prod') {
    throw new ApiError('validation_failed', 'sii_env must be cert or prod.', {
      issues: [{ path: '/sii_env', message: 'should be equal to one of the allowed values: cert, prod' }],
    });
  }
  const base = {
    kind: 'session' as const,
    companyId: null,
    environment: (envParam as SiiEnv | undefined) ?? 'cert',
    scopes: null,
    actorId: `user:${s.uid}`,
    userId: s.uid,
    sessionId,
  };
  if (!s.org) {
    if (!requireOrg) return { ...base, organizationId: '', role: null };
    throw new ApiError('org.required', 'Choose an organization for this session first.');
  }
  const rows: { role: MemberRole; rate_limit_max: number | null }[] = await db.query(
    `SELECT m.role, o.rate_limit_max FROM memberships m JOIN users u ON u.id = m.user_id
       JOIN organizations o ON o.id = m.organization_id
      WHERE m.user_id = $1 AND m.organization_id = $2`,
    [s.uid, s.org],
  );
  if (!rows[0]) {
    if (!requireOrg) return { ...base, organizationId: '', role: null };
    throw new ApiError(
      'org.required',
      'The session user is not a member of its organization; choose another.',
    );
  }
  return { ...base, organizationId: s.org, role: rows[0].role, rateLimitMax: rows[0].rate_limit_max };
}

export async function authenticate(
  ctx: Context,
  db: DataSource,
  opts: {
    allowBearer: boolean;
    allowSession: boolean;
    requireOrg: boolean;
    sessions: SessionStore;
    sessionId: string | undefined;
    now: Date;
    preload?: PrincipalPreload;
  },
): Promise<Principal> {
  const header = ctx.get('Authorization');
  if (header && opts.allowBearer) return authenticateApiKey(db, header, opts.now, opts.preload);
  const cookie = opts.allowSession ? opts.sessionId : undefined;
  if (cookie) {
    const env = typeof ctx.query.sii_env === 'string' ? ctx.query.sii_env : undefined;
    return authenticateSession(db, opts.sessions, cookie, opts.now, env, opts.requireOrg);
  }
  throw new ApiError(
    'unauthorized',
    opts.allowBearer
      ? 'Authentication required: send Authorization: Bearer <API_KEY>.'
      : 'Sign in to the dashboard first (this route takes only the session cookie).',
  );
}

/** 403 forbidden unless the principal may use the route: scope for keys, role for sessions. */
export function authorize(
  principal: Principal,
  scope: Scope | undefined,
  roles: MemberRole[] | undefined,
): void {
  if (principal.kind === 'api_key') {
    if (scope && !principal.scopes!.has(scope)) {
      throw new ApiError('forbidden', `This API key lacks the scope ${scope}.`, {
        detail: { requiredScope: scope },
      });
    }
    return;
  }
  if (roles && !roles.includes(principal.role!)) {
    // role cause: the spec gives next_action only for the scope cause
    throw new ApiError('forbidden', `Your role (${principal.role}) cannot do this; ask an owner or admin.`, {
      detail: { role: principal.role, allowedRoles: roles },
      withoutNextAction: true,
    });
  }
}
