import type { Scope, SiiEnv } from './scopes';

export type MemberRole = 'owner' | 'admin' | 'member';

/** Who is calling: an API key of a company, or a dashboard user inside an organization. */
export interface Principal {
  kind: 'api_key' | 'session' | 'oauth';
  organizationId: string;
  /** the API key's company; null for a session (which acts for the whole organization) */
  companyId: string | null;
  environment: SiiEnv;
  /** API key scopes; null for a session (sessions are checked by role) */
  scopes: ReadonlySet<Scope> | null;
  role: MemberRole | null;
  /** api key id, user id or MCP connection id (`mcp:<id>`), the rate-limit bucket */
  actorId: string;
  /** the session's user and session id (sessions only) */
  userId?: string;
  sessionId?: string;
  /** what the route's `preload` read in the API key's own lookup (API keys only) */
  preloaded?: { value: unknown };
  /** the organization's own request limit per window (organizations.rate_limit_max); null: the default */
  rateLimitMax?: number | null;
}

/** A read a route wants done in the API key's lookup: a JSON column over the api_keys row `k`. */
export interface PrincipalPreload {
  sql: string;
}
