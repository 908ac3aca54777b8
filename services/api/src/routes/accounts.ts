import { logIn, logOutAudit, membershipsOf, roleIn, signUp, userById } from '@dte/accounts';
import type { Context } from 'koa';
import type { ApiDeps, RouteDef } from '../context';
import { checkSessionCsrf } from '../auth/csrf';
import { accountStores, clearSessionCookie, readSessionCookie, setSessionCookie } from '../auth/session';
import { ApiError } from '@dte/error-catalog';
import { principalOf } from './route-kit';

interface Credentials {
  email: string;
  password: string;
  nombre?: string;
}

/**
 * Dashboard accounts (issue 14): sign-up, login, logout, who am I, choose the organization.
 * Login and sign-up are cross-origin protected like session mutations (login CSRF), and both
 * rotate the session id: an old session cookie sent along is destroyed.
 */
export function accountRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const stores = () => accountStores(deps);
  const startSession = async (ctx: Context, uid: string) => {
    const old = readSessionCookie(ctx, deps.config);
    if (old) await stores().sessions.destroy(old);
    const orgs = await membershipsOf(deps.dataSource, uid);
    const org = orgs.length === 1 ? orgs[0].organization_id : null;
    const id = await stores().sessions.create(uid, org, now());
    setSessionCookie(ctx, deps.config, id);
    return { organizaciones: orgs, organizacion_actual: org };
  };
  return [
    {
      method: 'post',
      path: '/auth/signup',
      operationId: 'signUp',
      summary:
        'Create a dashboard user (e-mail, password of 10-200 characters) and sign in (rate-limited per address and in all)',
      tag: 'accounts',
      auth: 'none',
      body: { kind: 'json', schema: 'account-signup.schema.json' },
      responses: { 201: { description: 'user created; Set-Cookie carries the session' } },
      errors: ['rate_limit', 'csrf_origin_mismatch', 'csrf_blocked'],
      handler: async (ctx) => {
        checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        await stores().guard.checkSignup(ctx.ip, now());
        const b = ctx.state.body as Credentials;
        const user = await signUp(
          deps.dataSource,
          { email: b.email, password: b.password, name: b.nombre },
          { ip: ctx.ip },
        );
        const s = await startSession(ctx, user.id);
        ctx.status = 201;
        ctx.body = { user, ...s };
      },
    },
    {
      method: 'post',
      path: '/auth/login',
      operationId: 'logIn',
      summary:
        'Sign in with e-mail and password (rate-limited; 5 wrong passwords lock the account 15 minutes)',
      tag: 'accounts',
      auth: 'none',
      body: { kind: 'json', schema: 'account-login.schema.json' },
      responses: { 200: { description: 'signed in; Set-Cookie carries a new session' } },
      errors: ['unauthorized', 'rate_limit', 'csrf_origin_mismatch', 'csrf_blocked'],
      handler: async (ctx) => {
        checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        const b = ctx.state.body as Credentials;
        const user = await logIn(deps.dataSource, stores().guard, b, { ip: ctx.ip, now: now() });
        ctx.body = { user, ...(await startSession(ctx, user.id)) };
      },
    },
    {
      method: 'post',
      path: '/auth/logout',
      operationId: 'logOut',
      summary: 'End the session (the cookie stops working everywhere at once)',
      tag: 'accounts',
      auth: 'session_user',
      responses: { 204: { description: 'signed out' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        await stores().sessions.destroy(p.sessionId!);
        await logOutAudit(deps.dataSource, p.userId!, ctx.ip);
        clearSessionCookie(ctx, deps.config);
        ctx.status = 204;
      },
    },
    {
      method: 'get',
      path: '/auth/me',
      operationId: 'whoAmI',
      summary: 'The session user, their organizations and roles, and the current organization',
      tag: 'accounts',
      auth: 'session_user',
      responses: { 200: { description: 'the session' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const user = await userById(deps.dataSource, p.userId!);
        const orgs = await membershipsOf(deps.dataSource, p.userId!);
        ctx.body = {
          user,
          organizaciones: orgs,
          organizacion_actual: p.organizationId || null,
          rol: p.role,
        };
      },
    },
    {
      method: 'put',
      path: '/auth/organizacion',
      operationId: 'chooseOrganization',
      summary: 'Choose the organization this session acts in (must be a member)',
      tag: 'accounts',
      auth: 'session_user',
      body: { kind: 'json', schema: 'account-organization.schema.json' },
      responses: { 200: { description: 'organization chosen' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const org = (ctx.state.body as { organization_id: string }).organization_id;
        const role = await roleIn(deps.dataSource, p.userId!, org);
        if (!role) throw new ApiError('not_found', 'No organization with that id among yours.');
        await stores().sessions.setOrganization(p.sessionId!, org);
        ctx.body = { organizacion_actual: org, rol: role };
      },
    },
  ];
}
