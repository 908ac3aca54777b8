import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import Provider, {
  errors,
  interactionPolicy,
  type Configuration,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import { consentPage, errorPage, loginRequiredPage, type GrantableCompany } from './consent-page';
import { redisAdapterFactory } from './redis-adapter';
import { registrationLimiter, type RegistrationOptions } from './registration';
import { OAUTH_SCOPES, isOAuthScope } from './scopes';

export { OAUTH_SCOPES, SCOPE_DESCRIPTIONS, isOAuthScope, type OAuthScope } from './scopes';
export { REGISTRATION_DEFAULTS, type RegistrationOptions } from './registration';
export type { GrantableCompany } from './consent-page';

/** The signed-in dashboard user, as the seam (`currentUser`) reports it. */
export interface DashboardUser {
  userId: string;
  email: string;
}

/** What one consent grants: the subject of the tokens (see `createConnection`). */
export interface NewConnection {
  userId: string;
  organizationId: string;
  companyId: string;
  environment: 'cert' | 'prod';
  clientId: string;
  clientName: string | null;
  scopes: string[];
}

export interface AuthorizationServerOptions {
  /** `{auth_url}`: the issuer, an origin such as https://api.example.cl (routes live under /oauth) */
  issuer: string;
  /** the MCP resource (audience of every access token), e.g. https://api.example.cl/mcp */
  mcpResource: string;
  redis: Redis;
  /** keys signing the provider's cookies (first signs, all verify) */
  cookieKeys: string[];
  /** private JWKS for id tokens; absent = a development key (one replica only) */
  jwks?: { keys: Record<string, unknown>[] };
  accessTokenTtlSec?: number;
  refreshTokenTtlSec?: number;
  /** THE seam: who is signed in to the dashboard on this request (null = nobody) */
  currentUser(req: IncomingMessage): Promise<DashboardUser | null>;
  /** the companies of the organizations the user belongs to */
  grantableCompanies(userId: string): Promise<GrantableCompany[]>;
  /** records the connection; its id becomes the tokens' subject */
  createConnection(c: NewConnection): Promise<string>;
  /**
   * whether the connection (the tokens' subject) still stands: a revoked connection's refresh
   * token answers invalid_grant
   */
  connectionActive(connectionId: string): Promise<boolean>;
  /** dynamic client registration: open or closed, redirect hosts, rate limits, unused-client TTL */
  registration?: Partial<RegistrationOptions>;
  /** dashboard login address for a return path (null = no link) */
  loginUrl?(returnTo: string): string | null;
}

/** A valid access token, as the MCP server sees it. */
export interface VerifiedAccessToken {
  /** the mcp_connections id (OAuth subject) */
  connectionId: string;
  clientId: string;
  scopes: string[];
  audience: string;
  expiresAt: number;
}

export class InvalidAccessToken extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidAccessToken';
  }
}

export interface AuthorizationServer {
  provider: Provider;
  /** Koa middleware answering /oauth/*, the interaction pages and the metadata documents */
  middleware: Middleware;
  /** resolves a Bearer access token or throws InvalidAccessToken (missing, expired, revoked, audience) */
  verifyAccessToken(token: string): Promise<VerifiedAccessToken>;
  metadataUrl: string;
}

const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/session/end',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  backchannel_authentication: '/oauth/backchannel',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
} as const;

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16_384) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The OAuth 2.1 authorization server of the remote MCP server, on `oidc-provider`: metadata
 * (RFC 8414, also as OpenID discovery), dynamic client registration (RFC 7591), authorization code
 * with PKCE S256 only, refresh tokens rotated on every use (reusing a rotated one revokes the
 * whole grant), revocation (RFC 7009), resource indicators (RFC 8707) so every access token's
 * audience is the MCP resource. Storage: Redis. Login and consent are our own pages.
 */
export function createAuthorizationServer(opts: AuthorizationServerOptions): AuthorizationServer {
  const accessTtl = opts.accessTokenTtlSec ?? 600;
  const refreshTtl = opts.refreshTokenTtlSec ?? 14 * 24 * 3600;
  const resourceScope = OAUTH_SCOPES.join(' ');
  const registration = registrationLimiter(opts.redis, opts.registration);
  const csrfToken = (uid: string, userId: string) =>
    createHmac('sha256', opts.cookieKeys[0]).update(`consent:${uid}:${userId}`).digest('base64url');
  // every authorization goes through our consent page (a signed-in dashboard user, a new
  // connection): the provider's own session never stands in for the dashboard's, so a dashboard
  // logout ends the ability to authorize, whatever the provider's cookie says
  const policy = interactionPolicy.base();
  policy
    .get('login')!
    .checks.add(
      new interactionPolicy.Check(
        'dashboard_consent',
        'each authorization is confirmed on the consent page',
        (ctx) =>
          ctx.oidc.result?.login
            ? interactionPolicy.Check.NO_NEED_TO_PROMPT
            : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  const configuration: Configuration = {
    adapter: redisAdapterFactory(opts.redis, {
      unusedClientTtlSec: registration.options.unusedClientTtlSec,
      usedClientTtlSec: refreshTtl,
    }),
    clients: [],
    ...(opts.jwks ? { jwks: opts.jwks as Configuration['jwks'] } : {}),
    cookies: { keys: opts.cookieKeys },
    // a revoked connection (or a removed member's) cannot refresh: the subject is no longer found
    findAccount: async (_ctx, sub) =>
      (await opts.connectionActive(sub)) ? { accountId: sub, claims: async () => ({ sub }) } : undefined,
    extraClientMetadata: {
      // not a property we use: the hook runs the registration policy on every client's metadata
      properties: ['software_id'],
      validator: (_ctx, key, _value, metadata) => {
        if (key === 'software_id')
          registration.checkRedirectUris(metadata.redirect_uris as string[] | undefined);
      },
    },
    claims: { openid: ['sub'] },
    scopes: ['openid', 'offline_access', ...OAUTH_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    routes: OAUTH_ROUTES,
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: registration.options.enabled },
      // a client revokes only its own tokens (a public client cannot authenticate otherwise)
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => opts.mcpResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => {
          if (resourceIndicator !== opts.mcpResource) {
            throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
          }
          return {
            scope: resourceScope,
            audience: opts.mcpResource,
            accessTokenTTL: accessTtl,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // tokens belong to the connection (revocable on its own), not to the provider's browser
    // session: a second consent from the same browser leaves the first agent connected, and the
    // refresh token lasts its 14 days as the consent page says
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    ttl: {
      AccessToken: accessTtl,
      AuthorizationCode: 60,
      Grant: refreshTtl,
      Interaction: 600,
      RefreshToken: refreshTtl,
      Session: 3600,
      IdToken: 600,
    },
    interactions: { policy, url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    renderError: async (ctx: KoaContextWithOIDC, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(`${out.error}: ${out.error_description ?? ''}`);
    },
  };
  const provider = new Provider(opts.issuer, configuration);
  provider.proxy = false;
  const callback = provider.callback();

  const interaction = async (ctx: Parameters<Middleware>[0], uid: string, action: string | undefined) => {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== uid) throw new errors.InvalidRequest('interaction mismatch');
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    if (!client) throw new errors.InvalidClient('client not found');
    // what the client asks for, within what it registered (RFC 7591 `scope`) when it did
    const registered = client.scope ? new Set(client.scope.split(' ')) : null;
    const scopes = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => isOAuthScope(s) && (!registered || registered.has(s)));
    const user = await opts.currentUser(ctx.req);
    if (action === 'abort') {
      ctx.respond = false;
      await provider.interactionFinished(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'El usuario rechazó la autorización.' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (!user) {
      ctx.type = 'html';
      ctx.status = 401;
      ctx.body = loginRequiredPage({ loginUrl: opts.loginUrl?.(`/oauth/interaction/${uid}`) ?? null });
      return;
    }
    const companies = await opts.grantableCompanies(user.userId);
    if (action === undefined) {
      ctx.type = 'html';
      ctx.body = consentPage({
        uid,
        csrf: csrfToken(uid, user.userId),
        redirectUri: String(details.params.redirect_uri ?? ''),
        clientName: client.clientName ?? clientId,
        userEmail: user.email,
        scopes,
        companies,
      });
      return;
    }
    // confirm: only from our own consent page (its token is bound to the interaction and user)
    const form = await readForm(ctx.req);
    const presented = Buffer.from(form.get('csrf') ?? '');
    const expected = Buffer.from(csrfToken(uid, user.userId));
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      ctx.status = 403;
      ctx.type = 'html';
      ctx.body = errorPage(
        'La autorización no vino de esta página (token de seguridad inválido). Vuelve a intentarlo.',
      );
      return;
    }
    const company = companies.find((c) => c.companyId === form.get('company_id'));
    const environment = form.get('environment');
    // the user may grant fewer scopes than asked (unchecked boxes), never more
    const chosen = new Set(form.getAll('scope'));
    const granted = scopes.filter((s) => chosen.has(s));
    if (!company || (environment !== 'cert' && environment !== 'prod') || granted.length === 0) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = errorPage('Elige una empresa, un ambiente y al menos un permiso.');
      return;
    }
    const connectionId = await opts.createConnection({
      userId: user.userId,
      organizationId: company.organizationId,
      companyId: company.companyId,
      environment,
      clientId,
      clientName: client.clientName ?? null,
      scopes: granted,
    });
    const grant = new provider.Grant({ accountId: connectionId, clientId });
    const resource = typeof details.params.resource === 'string' ? details.params.resource : opts.mcpResource;
    grant.addResourceScope(resource, granted.join(' '));
    const refused = scopes.filter((s) => !granted.includes(s));
    if (refused.length) {
      grant.rejectResourceScope(resource, refused.join(' '));
      grant.rejectOIDCScope(refused.join(' '));
    }
    // the provider also counts every requested scope it knows as an OpenID scope to consent to;
    // the ones not granted stay out of both lists (and so out of the tokens)
    const oidc = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => s === 'openid' || s === 'offline_access' || granted.includes(s as never));
    if (oidc.length) grant.addOIDCScope(oidc.join(' '));
    const grantId = await grant.save();
    ctx.respond = false;
    await provider.interactionFinished(
      ctx.req,
      ctx.res,
      { login: { accountId: connectionId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  };

  const middleware: Middleware = async (ctx, next) => {
    const p = ctx.path;
    const ours = p.startsWith('/oauth/') || p.startsWith('/.well-known/o');
    if (ours) {
      // never framed (clickjacking of the consent page), never sniffed
      ctx.res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
      ctx.res.setHeader('X-Frame-Options', 'DENY');
      ctx.res.setHeader('X-Content-Type-Options', 'nosniff');
    }
    if (p === OAUTH_ROUTES.registration && ctx.method === 'POST') {
      const refused = await registration.admit(ctx.ip);
      if (refused) {
        ctx.status = 429;
        ctx.set('Retry-After', String(refused.retryAfterSec));
        ctx.set('Cache-Control', 'no-store');
        ctx.body = {
          error: 'too_many_requests',
          error_description: `Too many client registrations (${refused.scope}); retry in ${refused.retryAfterSec} s.`,
        };
        return;
      }
    }
    const m = /^\/oauth\/interaction\/([\w-]+)(?:\/(confirm|abort))?$/.exec(p);
    if (m) {
      const action = m[2];
      if ((action && ctx.method !== 'POST') || (!action && ctx.method !== 'GET')) {
        ctx.status = 405;
        return;
      }
      try {
        await interaction(ctx, m[1], action);
      } catch (err) {
        ctx.respond = true;
        ctx.status = err instanceof errors.OIDCProviderError ? err.statusCode : 500;
        ctx.type = 'html';
        ctx.body = errorPage(
          err instanceof errors.OIDCProviderError
            ? `${err.error}: ${err.error_description ?? ''}`
            : 'Error interno.',
        );
      }
      return;
    }
    if (p === '/.well-known/oauth-authorization-server') {
      // RFC 8414: the same document as the provider's discovery
      ctx.req.url = '/.well-known/openid-configuration';
    } else if (!p.startsWith('/oauth/') && p !== '/.well-known/openid-configuration') {
      return next();
    }
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };

  const verifyAccessToken = async (token: string): Promise<VerifiedAccessToken> => {
    const at = await provider.AccessToken.find(token);
    if (!at) throw new InvalidAccessToken('The access token is unknown, expired or revoked.');
    if (at.aud !== opts.mcpResource && !(Array.isArray(at.aud) && at.aud.includes(opts.mcpResource))) {
      throw new InvalidAccessToken('The access token was issued for another audience.');
    }
    if (!at.grantId || !(await provider.Grant.find(at.grantId))) {
      throw new InvalidAccessToken('The grant of this access token was revoked.');
    }
    if (!at.accountId) throw new InvalidAccessToken('The access token has no subject.');
    return {
      connectionId: at.accountId,
      clientId: at.clientId!,
      scopes: String(at.scope ?? '')
        .split(' ')
        .filter(Boolean),
      audience: opts.mcpResource,
      expiresAt: at.exp!,
    };
  };

  return {
    provider,
    middleware,
    verifyAccessToken,
    metadataUrl: `${opts.issuer}/.well-known/oauth-authorization-server`,
  };
}
