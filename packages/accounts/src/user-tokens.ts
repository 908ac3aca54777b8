/**
 * One-use tokens of a dashboard user (table `user_tokens`, only their SHA-256 kept) and what they
 * open (issue 28):
 *
 * - invitations: a user made without a password (the seed command's `--owner-email`) gets an
 *   invitation token; only its holder sets the password (`acceptInvitation`). Sign-up no longer
 *   claims such a user: the first stranger to sign up with that address used to own it.
 * - password change (`changePassword`, signed in): the current password is checked behind the
 *   login guard (wrong ones count towards the lockout); every session of the user ends.
 * - password reset (`requestPasswordReset` → the token by e-mail; `resetPassword`): the request
 *   says nothing about whether the address has an account (the caller answers the same, and sends
 *   the mail after answering); at most RESETS_PER_HOUR tokens per user an hour (more requests are
 *   answered the same and send nothing); a token lives RESET_TTL_MIN minutes and opens once; a
 *   reset ends every session of the user and every other token.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ServiceError } from '@dte/error-catalog';
import type { DataSource, EntityManager } from 'typeorm';
import { audit } from './audit';
import type { LoginGuard } from './login-guard';
import { hashPassword, verifyPassword, PASSWORD_MAX, PASSWORD_MIN, type ScryptParams } from './password';
import type { UserRecord } from './users';
import { normalizeEmail } from './users';

export type UserTokenPurpose = 'invitation' | 'password_reset';

export const INVITATION_TTL_DAYS = 7;
export const RESET_TTL_MIN = 60;
export const RESETS_PER_HOUR = 3;

const PREFIX: Record<UserTokenPurpose, string> = { invitation: 'inv_', password_reset: 'rst_' };

const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A new token for the user (its text is returned once; only its hash is stored). */
export async function issueUserToken(
  db: DataSource | EntityManager,
  userId: string,
  purpose: UserTokenPurpose,
  now: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const token = PREFIX[purpose] + randomBytes(32).toString('base64url');
  const ttlMs = purpose === 'invitation' ? INVITATION_TTL_DAYS * 86_400_000 : RESET_TTL_MIN * 60_000;
  const expiresAt = new Date(now.getTime() + ttlMs);
  await db.query(
    `INSERT INTO user_tokens (token_hash, user_id, purpose, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
    [sha256(token), userId, purpose, now, expiresAt],
  );
  return { token, expiresAt };
}

function tokenRefused(): ServiceError {
  return new ServiceError('validation_failed', 'El enlace no es válido o ya venció; pida uno nuevo.', {
    issues: [{ path: '/token', message: 'unknown, used or expired token' }],
  });
}

function checkPassword(password: string, path: string): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new ServiceError(
      'validation_failed',
      `La contraseña debe tener entre ${PASSWORD_MIN} y ${PASSWORD_MAX} caracteres.`,
      { issues: [{ path, message: `password must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters` }] },
    );
  }
}

/** Refuses at once (before any password is hashed) a token that is not open. */
async function assertTokenOpen(
  db: DataSource,
  token: unknown,
  purpose: UserTokenPurpose,
  now: Date,
): Promise<void> {
  if (typeof token !== 'string' || !token.startsWith(PREFIX[purpose]) || token.length > 100)
    throw tokenRefused();
  const [open]: unknown[] = await db.query(
    `SELECT 1 FROM user_tokens WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3`,
    [sha256(token), purpose, now],
  );
  if (!open) throw tokenRefused();
}

/**
 * Redeems a token and sets the user's password in one transaction: the token must be of this
 * purpose, unused and unexpired (marked used by the same statement), and every other open token of
 * the user is spent too. Answers the user.
 */
async function redeemAndSetPassword(
  db: DataSource,
  token: string,
  purpose: UserTokenPurpose,
  hash: string,
  now: Date,
): Promise<UserRecord> {
  return db.transaction(async (m) => {
    const [hit]: { user_id: string }[] = await m.query(
      `WITH t AS (UPDATE user_tokens SET used_at = $3
          WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3 RETURNING user_id)
       SELECT user_id FROM t`,
      [sha256(token), purpose, now],
    );
    if (!hit) throw tokenRefused();
    await m.query(`UPDATE user_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, [
      hit.user_id,
      now,
    ]);
    const [user]: UserRecord[] = await m.query(
      `WITH u AS (UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING id, email, name) SELECT * FROM u`,
      [hit.user_id, hash],
    );
    return user!;
  });
}

/** The invited user sets their password (and, when they had none, their name). */
export async function acceptInvitation(
  db: DataSource,
  input: { token: string; password: string; name?: string | null },
  opts: { now: Date; ip?: string | null; scrypt?: ScryptParams },
): Promise<UserRecord> {
  checkPassword(input.password, '/password');
  await assertTokenOpen(db, input.token, 'invitation', opts.now);
  const hash = await hashPassword(input.password, opts.scrypt);
  const user = await redeemAndSetPassword(db, input.token, 'invitation', hash, opts.now);
  if (input.name?.trim()) {
    await db.query(`UPDATE users SET name = COALESCE(name, $2) WHERE id = $1`, [user.id, input.name.trim()]);
  }
  await audit(db, {
    organizationId: null,
    actor: `user:${user.id}`,
    action: 'user.invitation_accepted',
    ip: opts.ip,
  });
  return { ...user, name: user.name ?? (input.name?.trim() || null) };
}

/**
 * A signed-in user changes their password: the current one is checked behind the login guard
 * (a wrong one is validation_failed at /actual and counts towards the lockout; locked: 429
 * rate_limit). Every session of the user ends (the caller starts a fresh one) and open reset
 * tokens are spent.
 */
export async function changePassword(
  db: DataSource,
  guard: LoginGuard,
  uid: string,
  input: { actual: string; nueva: string },
  ctx: { ip: string; now: Date; scrypt?: ScryptParams; endSessions: (uid: string) => Promise<void> },
): Promise<void> {
  checkPassword(input.nueva, '/nueva');
  const [row]: { email: string; password_hash: string | null }[] = await db.query(
    'SELECT email, password_hash FROM users WHERE id = $1',
    [uid],
  );
  if (!row?.password_hash) throw new ServiceError('unauthorized', 'La sesión no corresponde a un usuario.');
  await guard.check(row.email, ctx.ip, ctx.now);
  if (!(await verifyPassword(input.actual, row.password_hash))) {
    await guard.failed(row.email, ctx.now);
    throw new ServiceError('validation_failed', 'La contraseña actual no es correcta.', {
      issues: [{ path: '/actual', message: 'the current password does not match' }],
    });
  }
  await guard.succeeded(row.email);
  const hash = await hashPassword(input.nueva, ctx.scrypt);
  await db.transaction(async (m) => {
    await m.query('UPDATE users SET password_hash = $2 WHERE id = $1', [uid, hash]);
    await m.query(`UPDATE user_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, [
      uid,
      ctx.now,
    ]);
    await audit(m, {
      organizationId: null,
      actor: `user:${uid}`,
      action: 'user.password_changed',
      ip: ctx.ip,
    });
  });
  await ctx.endSessions(uid);
}

/**
 * A reset asked for an address: the token to mail, or null (no such user, a user without a
 * password — they have an invitation — or RESETS_PER_HOUR already this hour). The caller answers
 * the same in every case.
 */
export async function requestPasswordReset(
  db: DataSource,
  email: string,
  ctx: { now: Date; ip?: string | null },
): Promise<{ email: string; token: string; expiresAt: Date } | null> {
  const [user]: { id: string; email: string; recent: number }[] = await db.query(
    `SELECT u.id, u.email, (SELECT count(*)::int FROM user_tokens t
        WHERE t.user_id = u.id AND t.purpose = 'password_reset' AND t.created_at > $2) AS recent
       FROM users u WHERE u.email = $1 AND u.password_hash IS NOT NULL`,
    [normalizeEmail(String(email)), new Date(ctx.now.getTime() - 3_600_000)],
  );
  if (!user || user.recent >= RESETS_PER_HOUR) return null;
  const { token, expiresAt } = await issueUserToken(db, user.id, 'password_reset', ctx.now);
  await audit(db, {
    organizationId: null,
    actor: `user:${user.id}`,
    action: 'user.password_reset_requested',
    ip: ctx.ip,
  });
  return { email: user.email, token, expiresAt };
}

/** Sets a new password with a mailed token; every session of the user ends. */
export async function resetPassword(
  db: DataSource,
  input: { token: string; nueva: string },
  ctx: { now: Date; ip?: string | null; scrypt?: ScryptParams; endSessions: (uid: string) => Promise<void> },
): Promise<UserRecord> {
  checkPassword(input.nueva, '/nueva');
  await assertTokenOpen(db, input.token, 'password_reset', ctx.now);
  const hash = await hashPassword(input.nueva, ctx.scrypt);
  const user = await redeemAndSetPassword(db, input.token, 'password_reset', hash, ctx.now);
  await audit(db, {
    organizationId: null,
    actor: `user:${user.id}`,
    action: 'user.password_reset',
    ip: ctx.ip,
  });
  await ctx.endSessions(user.id);
  return user;
}
