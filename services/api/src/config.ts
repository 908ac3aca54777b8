import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ConfigError, parse, readConfig } from '@dte/service-runtime';
import { parseFeatureFlag, type FeatureFlag } from '@dte/boletas';

import { loadSiiCafKeys, type FoliosConfig } from '@dte/folios';
import { isBcchUrl, type EmissionConfig } from '@dte/emission';
import type { ReceptionConfig } from '@dte/reception';

/**
 * The api's configuration: its own settings, and the slices the domain packages it runs read
 * (each declared once, in its package).
 */
export interface Config extends FoliosConfig, EmissionConfig, ReceptionConfig {
  port: number;
  host: string;
  databaseUrl: string;
  /** PostgreSQL schema holding the tables; `public` when unset */
  databaseSchema?: string;
  redisUrl: string;
  /** base64 of 32 random bytes: the key that wraps every data key (envelope encryption) */
  masterKey: string;
  /** names the master key inside each sealed secret, so a rotation can tell old from new */
  masterKeyId: string;
  /** no longer used (sessions are server-side in Redis since issue 14); accepted so old env files start */
  sessionSecret?: string;
  /** dashboard sessions end after this many seconds without a request */
  sessionIdleSec: number;
  /** and at the latest this many seconds after login */
  sessionAbsoluteSec: number;
  /** Secure flag and __Host- prefix on the session cookie (default: PUBLIC_BASE_URL is https) */
  sessionCookieSecure: boolean;
  /** wrong passwords in a row that lock an account, and for how long */
  loginMaxFailures: number;
  loginLockSec: number;
  /** origins allowed to send session-authenticated mutations (the dashboard) */
  dashboardOrigins: string[];
  /** absolute URL of the api's base path, used for docs_url links */
  publicBaseUrl: string;
  rateLimitMax: number;
  rateLimitWindowSec: number;
  /** failed authentications per client address per minute before key lookups stop (429) */
  authFailureMax: number;
  /** `{auth_url}` of the OAuth server (issuer; routes under /oauth); default the origin of PUBLIC_BASE_URL */
  authUrl?: string;
  /**
   * OAUTH_JWKS_FILE: a JWKS (JSON with private keys: RSA for RS256) the OAuth server signs with, the
   * same file on every replica. Unset: oidc-provider's development keys (it warns at start-up);
   * access tokens are opaque, so only ID tokens of clients asking for `openid` are signed.
   */
  oauthJwks?: { keys: Record<string, unknown>[] };
  /** lifetime of OAuth access tokens of the MCP server, seconds */
  oauthAccessTokenTtlSec: number;
  /** dashboard login page (the consent step links to it with ?return_to=) */
  dashboardLoginUrl?: string;
  /** OAUTH_REGISTRATION: dynamic client registration open (default) or closed */
  oauthRegistrationEnabled: boolean;
  /** OAUTH_REDIRECT_HOSTS: hosts a registered redirect URI may point at (empty: any) */
  oauthRedirectHosts: string[];
  /** client registrations per address and hour, and per hour over all addresses */
  oauthRegistrationsPerAddressPerHour: number;
  oauthRegistrationsPerHour: number;
  /** a registered client never used for an authorization is forgotten after this many seconds */
  oauthUnusedClientTtlSec: number;
  /** default MCP caps per connection and minute (emit, borrador, reenvio); a company may set its own */
  mcpCapEmitPerMinute: number;
  mcpCapBorradorPerMinute: number;
  mcpCapReenvioPerMinute: number;
  /** BOLETAS_ENABLED: SII environments where /boletas answers (empty: the spec's 404) */
  boletasEnabled: FeatureFlag;
  /** BHE_ENABLED: SII environments where /bhe answers (empty: the spec's 404) */
  bheEnabled: FeatureFlag;
  /**
   * Load shedding (http/inflight-limit.ts): write requests under /api/v1 this process handles at
   * once; one more is answered 429 rate_limit with Retry-After at once; 0 disables the cap
   */
  apiMaxInflight: number;
  /** Retry-After of that answer, seconds */
  apiInflightRetryAfterSec: number;
  /**
   * Fairness of that cap (http/inflight-limit.ts): the writes one organization may have in
   * progress in this process at once (0: no share, only the process cap). Unset: three quarters
   * of API_MAX_INFLIGHT, so a quarter always stays for the other organizations while one
   * high-volume issuer still drives most of the process.
   */
  apiMaxInflightPerOrg?: number;
  /** a client must send its request headers within this many ms (Node's headersTimeout) */
  apiHeadersTimeoutMs: number;
  /** and its whole request, body included, within this many ms (Node's requestTimeout): then 408 */
  apiRequestTimeoutMs: number;
  /**
   * TRUSTED_PROXIES: addresses or CIDR blocks of the proxies (ingress) whose X-Forwarded-For is
   * believed (http/client-address.ts); empty: the socket's peer is the client
   */
  trustedProxies: string[];
  /** sign-ups per client address per hour, and in all per minute (every replica together) */
  signupPerAddressPerHour: number;
  signupGlobalPerMinute: number;
  /** logins per client address per minute, and in all per minute (every replica together) */
  loginPerAddressPerMinute: number;
  loginGlobalPerMinute: number;
  /** scrypt password hashes running at once in this process (128 MiB each), and how many may wait */
  passwordHashConcurrency: number;
  passwordHashQueue: number;
  /** how often keys created outside the api (seed, CLI) are marked as existing (auth/known-keys.ts), ms */
  knownKeysRefreshMs: number;
  /** Strict-Transport-Security max-age of every answer when PUBLIC_BASE_URL is https (0: none) */
  hstsMaxAgeSec: number;
}

const loadJwks = (file: string): { keys: Record<string, unknown>[] } => {
  const jwks = JSON.parse(readFileSync(file, 'utf8')) as { keys?: unknown };
  if (
    !Array.isArray(jwks.keys) ||
    jwks.keys.length === 0 ||
    !jwks.keys.every((k) => k && typeof k === 'object')
  ) {
    throw new Error(`${file}: expected a JWKS {"keys": [...]} with at least one key`);
  }
  return jwks as { keys: Record<string, unknown>[] };
};
const base64Key = (raw: string): string => {
  if (Buffer.from(raw, 'base64').length !== 32) throw new Error('expected base64 of exactly 32 bytes');
  return raw;
};
const secret = (raw: string): string => {
  if (raw.length < 32) throw new Error('expected at least 32 characters');
  return raw;
};
const url = (raw: string): string => {
  new URL(raw);
  return raw.replace(/\/+$/, '');
};
const positive = (raw: string): number => {
  const n = parse.int(raw);
  if (n <= 0) throw new Error(`expected a positive integer, got ${n}`);
  return n;
};

const seriesMap = (raw: string): Record<string, string> => {
  const m = JSON.parse(raw) as unknown;
  if (typeof m !== 'object' || m === null || Array.isArray(m))
    throw new Error('expected a JSON object {"ISO code": "series code"}');
  for (const [k, v] of Object.entries(m))
    if (!/^[A-Z]{3}$/.test(k) || typeof v !== 'string' || !/^[A-Z0-9.]+$/.test(v))
      throw new Error(`bad entry ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  return m as Record<string, string>;
};

/**
 * The default per-key (and per session user) request limit a minute: 20 000, about 330 requests a
 * second, so one integration can drive the documented capacity of one deployment (300 documents a
 * second, issue 27) without being refused; large APIs' 100 a second per account is the floor this
 * stays above. An organization may have its own (organizations.rate_limit_max, set-rate-limit).
 */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 20_000;

/** Every environment variable the api reads, checked at start-up. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.API_PORT ? parse.port(env.API_PORT) : 3000;
  const config = readConfig<Config>(
    {
      port: { env: 'API_PORT', default: 3000, parse: parse.port },
      host: { env: 'API_HOST', default: '127.0.0.1' },
      databaseUrl: { env: 'DATABASE_URL', default: 'postgres://dte:dte@127.0.0.1:15432/dte', parse: url },
      databaseSchema: { env: 'DATABASE_SCHEMA', required: false },
      redisUrl: { env: 'REDIS_URL', default: 'redis://127.0.0.1:16379', parse: url },
      masterKey: { env: 'MASTER_KEY', parse: base64Key },
      masterKeyId: { env: 'MASTER_KEY_ID', default: 'mk1' },
      sessionSecret: { env: 'SESSION_SECRET', parse: secret, required: false },
      sessionIdleSec: { env: 'SESSION_IDLE_SEC', default: 1800, parse: positive },
      sessionAbsoluteSec: { env: 'SESSION_ABSOLUTE_SEC', default: 43200, parse: positive },
      sessionCookieSecure: {
        env: 'SESSION_COOKIE_SECURE',
        default: (env.PUBLIC_BASE_URL ?? '').startsWith('https:'),
        parse: parse.bool,
      },
      loginMaxFailures: { env: 'LOGIN_MAX_FAILURES', default: 5, parse: positive },
      loginLockSec: { env: 'LOGIN_LOCK_SEC', default: 900, parse: positive },
      dashboardOrigins: { env: 'DASHBOARD_ORIGINS', default: ['http://127.0.0.1:5173'], parse: parse.list },
      publicBaseUrl: { env: 'PUBLIC_BASE_URL', default: `http://127.0.0.1:${port}/api/v1`, parse: url },
      rateLimitMax: { env: 'RATE_LIMIT_MAX', default: DEFAULT_RATE_LIMIT_PER_MINUTE, parse: positive },
      rateLimitWindowSec: { env: 'RATE_LIMIT_WINDOW_SEC', default: 60, parse: positive },
      authFailureMax: { env: 'AUTH_FAILURE_MAX', default: 20, parse: positive },
      lowFoliosThreshold: { env: 'LOW_FOLIOS_THRESHOLD', default: 20, parse: parse.int },
      cafRequestLockSec: { env: 'CAF_REQUEST_LOCK_SEC', default: 120, parse: positive },
      cafAutoIntervalSec: { env: 'CAF_AUTO_INTERVAL_SEC', default: 300, parse: parse.int },
      siiBaseUrl: { env: 'SII_BASE_URL', parse: url, required: false },
      exchangeRateUrl: { env: 'EXCHANGE_RATE_URL', parse: url, required: false },
      exchangeRateUser: { env: 'EXCHANGE_RATE_USER', required: false },
      exchangeRatePassword: { env: 'EXCHANGE_RATE_PASSWORD', required: false },
      exchangeRateSeries: { env: 'EXCHANGE_RATE_SERIES', required: false, parse: seriesMap },
      siiTimeoutMs: { env: 'SII_TIMEOUT_MS', default: 15000, parse: positive },
      siiCafKeys: { env: 'SII_CAF_KEYS_FILE', parse: loadSiiCafKeys, required: false },
      smtpUrl: { env: 'SMTP_URL', parse: url, required: false },
      mailFrom: { env: 'MAIL_FROM', default: 'DTE <no-reply@localhost>' },
      muestrasMailTo: { env: 'MUESTRAS_MAIL_TO', required: false },
      deliveryIntervalSec: { env: 'DELIVERY_INTERVAL_SEC', default: 30, parse: parse.int },
      authUrl: { env: 'AUTH_URL', parse: url, required: false },
      oauthJwks: { env: 'OAUTH_JWKS_FILE', parse: loadJwks, required: false },
      oauthAccessTokenTtlSec: { env: 'OAUTH_ACCESS_TOKEN_TTL_SEC', default: 600, parse: positive },
      dashboardLoginUrl: { env: 'DASHBOARD_LOGIN_URL', parse: url, required: false },
      oauthRegistrationEnabled: {
        env: 'OAUTH_REGISTRATION',
        default: true,
        parse: (v: string) => {
          if (v !== 'open' && v !== 'closed') throw new Error('must be open or closed');
          return v === 'open';
        },
      },
      oauthRedirectHosts: { env: 'OAUTH_REDIRECT_HOSTS', default: [], parse: parse.list },
      oauthRegistrationsPerAddressPerHour: {
        env: 'OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR',
        default: 20,
        parse: positive,
      },
      oauthRegistrationsPerHour: { env: 'OAUTH_REGISTRATIONS_PER_HOUR', default: 500, parse: positive },
      oauthUnusedClientTtlSec: { env: 'OAUTH_UNUSED_CLIENT_TTL_SEC', default: 86400, parse: positive },
      mcpCapEmitPerMinute: { env: 'MCP_CAP_EMIT_PER_MINUTE', default: 20, parse: positive },
      mcpCapBorradorPerMinute: { env: 'MCP_CAP_BORRADOR_PER_MINUTE', default: 60, parse: positive },
      mcpCapReenvioPerMinute: { env: 'MCP_CAP_REENVIO_PER_MINUTE', default: 10, parse: positive },
      boletasEnabled: { env: 'BOLETAS_ENABLED', default: new Set(), parse: parseFeatureFlag },
      bheEnabled: { env: 'BHE_ENABLED', default: new Set(), parse: parseFeatureFlag },
      emissionBacklogMax: { env: 'EMISSION_BACKLOG_MAX', default: 10000, parse: parse.int },
      emissionBacklogRetryAfterSec: { env: 'EMISSION_BACKLOG_RETRY_AFTER_SEC', default: 30, parse: positive },
      emissionBacklogCacheMs: { env: 'EMISSION_BACKLOG_CACHE_MS', default: 1000, parse: parse.int },
      apiMaxInflight: { env: 'API_MAX_INFLIGHT', default: 128, parse: parse.int },
      apiInflightRetryAfterSec: { env: 'API_INFLIGHT_RETRY_AFTER_SEC', default: 1, parse: positive },
      apiMaxInflightPerOrg: { env: 'API_MAX_INFLIGHT_PER_ORG', required: false, parse: parse.int },
      apiHeadersTimeoutMs: { env: 'API_HEADERS_TIMEOUT_MS', default: 10_000, parse: positive },
      apiRequestTimeoutMs: { env: 'API_REQUEST_TIMEOUT_MS', default: 30_000, parse: positive },
      trustedProxies: { env: 'TRUSTED_PROXIES', default: [], parse: parseTrustedProxies },
      signupPerAddressPerHour: { env: 'SIGNUP_PER_ADDRESS_PER_HOUR', default: 10, parse: positive },
      signupGlobalPerMinute: { env: 'SIGNUP_GLOBAL_PER_MINUTE', default: 60, parse: positive },
      loginPerAddressPerMinute: { env: 'LOGIN_PER_ADDRESS_PER_MINUTE', default: 30, parse: positive },
      loginGlobalPerMinute: { env: 'LOGIN_GLOBAL_PER_MINUTE', default: 600, parse: positive },
      passwordHashConcurrency: { env: 'PASSWORD_HASH_CONCURRENCY', default: 2, parse: positive },
      passwordHashQueue: { env: 'PASSWORD_HASH_QUEUE', default: 16, parse: parse.int },
      knownKeysRefreshMs: { env: 'KNOWN_KEYS_REFRESH_MS', default: 60_000, parse: positive },
      hstsMaxAgeSec: { env: 'HSTS_MAX_AGE_SEC', default: 31_536_000, parse: parse.int },
    },
    env,
  );
  if (
    config.exchangeRateUrl &&
    isBcchUrl(config.exchangeRateUrl) &&
    !(config.exchangeRateUser && config.exchangeRatePassword)
  )
    throw new ConfigError([
      'EXCHANGE_RATE_URL is the Banco Central API: EXCHANGE_RATE_USER and EXCHANGE_RATE_PASSWORD are required',
    ]);
  return config;
}

/**
 * Start-up refusals of a production process (NODE_ENV=production, as the image and the Helm chart
 * set it): the settings whose development fallbacks are unsafe. SII_CAF_KEYS_FILE unset accepts
 * CAFs without checking the SII's signature; OAUTH_JWKS_FILE unset signs with oidc-provider's
 * public development keys; SESSION_SECRET unset keys the OAuth cookies from the master key.
 * Elsewhere these are warnings (the list is returned either way).
 */
export function riskyDefaults(config: Config): string[] {
  const out: string[] = [];
  if (!config.siiCafKeys)
    out.push('SII_CAF_KEYS_FILE is not set: CAF signatures (FRMA) would not be verified');
  if (!config.oauthJwks)
    out.push("OAUTH_JWKS_FILE is not set: the OAuth server would sign with oidc-provider's development keys");
  if (!config.sessionSecret)
    out.push('SESSION_SECRET is not set: the OAuth cookies would be keyed from the master key');
  return out;
}

/** True for a production process: NODE_ENV=production. */
export function isProduction(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODE_ENV === 'production';
}

/** TRUSTED_PROXIES: comma-separated IPv4/IPv6 addresses or CIDR blocks. */
function parseTrustedProxies(raw: string): string[] {
  const list = parse.list(raw);
  for (const item of list) {
    const [addr, bits, extra] = item.split('/');
    const family = isIP(addr ?? '');
    const max = family === 6 ? 128 : 32;
    if (
      !family ||
      extra !== undefined ||
      (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))
    )
      throw new Error(`bad entry ${JSON.stringify(item)}: expected an IP address or CIDR block`);
  }
  return list;
}
