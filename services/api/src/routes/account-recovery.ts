/**
 * The password of a dashboard user (issue 28); the rules live in @dte/accounts (user-tokens.ts):
 *
 * - `POST /auth/invitacion` {token, password, nombre?}: an invited user (the seed command's owner
 *   without a password) sets theirs; then signs in with POST /auth/login;
 * - `PUT /auth/password` {actual, nueva}: signed in; every session of the user ends and this one
 *   continues with a new cookie;
 * - `POST /auth/password/olvido` {email}: 202 with the same answer whether the address has an
 *   account or not; when it has, the token is mailed (SMTP_URL, MAIL_FROM) after answering, at
 *   most 3 an hour per user; without SMTP_URL the route answers not_found (no reset here);
 * - `POST /auth/password/restablecer` {token, nueva}: 204; every session of the user ends.
 */
import {
  acceptInvitation,
  changePassword,
  requestPasswordReset,
  resetPassword,
  RESET_TTL_MIN,
} from '@dte/accounts';
import nodemailer from 'nodemailer';
import type { ApiDeps, RouteDef } from '../context';
import { checkSessionCsrf } from '../auth/csrf';
import { accountStores, setSessionCookie } from '../auth/session';
import { ApiError } from '@dte/error-catalog';
import { principalOf } from './route-kit';

export function accountRecoveryRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const stores = () => accountStores(deps);
  const endSessions = (uid: string) => stores().sessions.destroyAllOf(uid);
  const mailReset = async (to: string, token: string) => {
    const link = `${deps.config.dashboardOrigins[0] ?? ''}/dashboard/restablecer#token=${token}`;
    const transport = nodemailer.createTransport(deps.config.smtpUrl!);
    try {
      await transport.sendMail({
        from: deps.config.mailFrom,
        to: [{ name: '', address: to }],
        subject: 'Restablecer su contraseña',
        text:
          `Recibimos una solicitud para restablecer la contraseña de su cuenta.\n\n` +
          `Abra este enlace dentro de ${RESET_TTL_MIN} minutos: ${link}\n\n` +
          `O use este código en la página de restablecimiento: ${token}\n\n` +
          `Si usted no lo pidió, ignore este correo: su contraseña no cambia.`,
      });
    } finally {
      transport.close();
    }
  };
  return [
    {
      method: 'post',
      path: '/auth/invitacion',
      operationId: 'acceptInvitation',
      summary: 'An invited user (no password yet) sets their password with the invitation token',
      tag: 'accounts',
      auth: 'none',
      body: { kind: 'json', schema: 'account-invitation.schema.json' },
      responses: { 200: { description: '{user}: the password is set; sign in with POST /auth/login' } },
      errors: ['validation_failed', 'csrf_origin_mismatch', 'csrf_blocked'],
      handler: async (ctx) => {
        checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        const b = ctx.state.body as { token: string; password: string; nombre?: string };
        const user = await acceptInvitation(
          deps.dataSource,
          { token: b.token, password: b.password, name: b.nombre },
          { now: now(), ip: ctx.ip },
        );
        ctx.body = { user };
      },
    },
    {
      method: 'put',
      path: '/auth/password',
      operationId: 'changePassword',
      summary: 'Change the password (the current one is checked); every other session of the user ends',
      tag: 'accounts',
      auth: 'session_user',
      body: { kind: 'json', schema: 'account-password-change.schema.json' },
      responses: { 204: { description: 'changed; Set-Cookie carries the new session' } },
      errors: ['validation_failed', 'rate_limit'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const b = ctx.state.body as { actual: string; nueva: string };
        await changePassword(deps.dataSource, stores().guard, p.userId!, b, {
          ip: ctx.ip,
          now: now(),
          endSessions,
        });
        const id = await stores().sessions.create(p.userId!, p.organizationId || null, now());
        setSessionCookie(ctx, deps.config, id);
        ctx.status = 204;
      },
    },
    {
      method: 'post',
      path: '/auth/password/olvido',
      operationId: 'forgotPassword',
      summary:
        'Ask for a password reset: the same 202 whether the e-mail has an account or not; the token goes by e-mail (at most 3 an hour)',
      tag: 'accounts',
      auth: 'none',
      body: { kind: 'json', schema: 'account-password-forgot.schema.json' },
      responses: { 202: { description: '{mensaje}' } },
      errors: ['not_found', 'csrf_origin_mismatch', 'csrf_blocked'],
      handler: async (ctx) => {
        checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        if (!deps.config.smtpUrl) {
          throw new ApiError('not_found', 'Password reset by e-mail is not enabled here (SMTP_URL).');
        }
        const { email } = ctx.state.body as { email: string };
        const reset = await requestPasswordReset(deps.dataSource, email, { now: now(), ip: ctx.ip });
        // mailed after answering: the answer and its timing do not depend on the address
        if (reset) {
          setImmediate(() => {
            mailReset(reset.email, reset.token).catch((err: unknown) =>
              deps.logger.error({ err }, 'password reset mail not sent'),
            );
          });
        }
        ctx.status = 202;
        ctx.body = {
          mensaje:
            'Si la dirección corresponde a una cuenta, le enviamos un enlace para restablecer la contraseña.',
        };
      },
    },
    {
      method: 'post',
      path: '/auth/password/restablecer',
      operationId: 'resetPassword',
      summary:
        'Set a new password with the mailed token (60 minutes, one use); every session of the user ends',
      tag: 'accounts',
      auth: 'none',
      body: { kind: 'json', schema: 'account-password-reset.schema.json' },
      responses: { 204: { description: 'the password is set; sign in with POST /auth/login' } },
      errors: ['validation_failed', 'csrf_origin_mismatch', 'csrf_blocked'],
      handler: async (ctx) => {
        checkSessionCsrf(ctx, deps.config.dashboardOrigins);
        const b = ctx.state.body as { token: string; nueva: string };
        await resetPassword(deps.dataSource, b, { now: now(), ip: ctx.ip, endSessions });
        ctx.status = 204;
      },
    },
  ];
}
