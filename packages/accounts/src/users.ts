import type { DataSource } from 'typeorm';
import { ServiceError } from '@dte/error-catalog';
import { audit } from './audit';
import type { LoginGuard } from './login-guard';
import {
  dummyHash,
  hashPassword,
  verifyPassword,
  PASSWORD_MAX,
  PASSWORD_MIN,
  type ScryptParams,
} from './password';

export interface UserRecord {
  id: string;
  email: string;
  name: string | null;
}

export interface MembershipRecord {
  organization_id: string;
  name: string;
  rut: string | null;
  role: 'owner' | 'admin' | 'member';
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,}$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function invalid(path: string, message: string): ServiceError {
  return new ServiceError('validation_failed', message, { issues: [{ path, message }] });
}

/** Creates a user with a password; a taken e-mail is validation_failed at /email. */
export async function signUp(
  db: DataSource,
  input: { email: string; password: string; name?: string | null },
  opts: { scrypt?: ScryptParams; ip?: string | null } = {},
): Promise<UserRecord> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email)) throw invalid('/email', 'email must be an e-mail address');
  if (input.password.length < PASSWORD_MIN || input.password.length > PASSWORD_MAX) {
    throw invalid('/password', `password must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`);
  }
  const hash = await hashPassword(input.password, opts.scrypt);
  // a taken address is refused, also one of a user made without a password (the seed's invited
  // owner): only the holder of its invitation token sets that password (user-tokens.ts)
  const rows: UserRecord[] = await db.query(
    `INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3)
     ON CONFLICT (email) DO NOTHING
     RETURNING id, email, name`,
    [email, input.name?.trim() || null, hash],
  );
  if (!rows[0]) throw invalid('/email', 'an account with this e-mail already exists; sign in instead');
  await audit(db, { organizationId: null, actor: `user:${rows[0].id}`, action: 'user.signup', ip: opts.ip });
  return rows[0];
}

/**
 * Checks e-mail and password behind the login guard. Wrong e-mail or password: 401
 * unauthorized (the same answer for both, after the same work); locked: 429 rate_limit.
 * Every attempt is audited in each organization of the user.
 */
export async function logIn(
  db: DataSource,
  guard: LoginGuard,
  input: { email: string; password: string },
  ctx: { ip: string; now: Date },
): Promise<UserRecord> {
  const email = normalizeEmail(input.email);
  await guard.check(email, ctx.ip, ctx.now);
  const rows: (UserRecord & { password_hash: string | null })[] = await db.query(
    'SELECT id, email, name, password_hash FROM users WHERE email = $1',
    [email],
  );
  const user = rows[0];
  const ok = await verifyPassword(input.password, user?.password_hash ?? (await dummyHash()));
  if (!user || !user.password_hash || !ok) {
    const locked = await guard.failed(email, ctx.now);
    if (user) {
      await auditEachOrg(db, user.id, locked ? 'session.locked' : 'session.login_failed', ctx.ip);
    }
    throw new ServiceError('unauthorized', 'Correo o contraseña incorrectos.');
  }
  await guard.succeeded(email);
  await auditEachOrg(db, user.id, 'session.login', ctx.ip);
  return { id: user.id, email: user.email, name: user.name };
}

async function auditEachOrg(
  db: DataSource,
  uid: string,
  action: 'session.login' | 'session.login_failed' | 'session.locked' | 'session.logout',
  ip: string | null,
): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (organization_id, actor, action, ip)
     SELECT x.org, $1, $2, $3 FROM (
       SELECT organization_id AS org FROM memberships WHERE user_id = $4
       UNION ALL SELECT NULL WHERE NOT EXISTS (SELECT 1 FROM memberships WHERE user_id = $4)) x`,
    [`user:${uid}`, action, ip, uid],
  );
}

export async function logOutAudit(db: DataSource, uid: string, ip: string | null): Promise<void> {
  await auditEachOrg(db, uid, 'session.logout', ip);
}

export async function userById(db: DataSource, uid: string): Promise<UserRecord | null> {
  const rows: UserRecord[] = await db.query('SELECT id, email, name FROM users WHERE id = $1', [uid]);
  return rows[0] ?? null;
}

export async function membershipsOf(db: DataSource, uid: string): Promise<MembershipRecord[]> {
  return db.query(
    `SELECT m.organization_id, o.name, o.rut, m.role FROM memberships m
       JOIN organizations o ON o.id = m.organization_id
      WHERE m.user_id = $1 ORDER BY o.name, o.id`,
    [uid],
  );
}

export async function roleIn(
  db: DataSource,
  uid: string,
  org: string,
): Promise<MembershipRecord['role'] | null> {
  const rows: { role: MembershipRecord['role'] }[] = await db.query(
    'SELECT role FROM memberships WHERE user_id = $1 AND organization_id = $2',
    [uid, org],
  );
  return rows[0]?.role ?? null;
}
