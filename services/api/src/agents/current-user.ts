import type { IncomingMessage } from 'node:http';
import type { DataSource } from 'typeorm';
import type { DashboardUser } from '@dte/oauth-server';
import { SESSION_COOKIE, verifySession } from '../auth/session';

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/**
 * THE seam between the OAuth consent step and the dashboard's accounts: who is signed in on this
 * request. Today it reads the dashboard session cookie the api already verifies
 * (auth/session.ts) and the user row. There is no password column in `users` on this branch, so
 * the authorization server has no login form of its own: with no session it shows a link to the
 * dashboard login (DASHBOARD_LOGIN_URL). INTEGRATOR: when branch i14's accounts package
 * (sign-up/login, Redis sessions) is merged, replace the body of this function with its session
 * lookup; nothing else in the OAuth server needs to change.
 */
export async function currentDashboardUser(
  db: DataSource,
  sessionSecret: string,
  req: IncomingMessage,
  now: Date,
): Promise<DashboardUser | null> {
  const cookie = cookieValue(req.headers.cookie, SESSION_COOKIE);
  if (!cookie) return null;
  const claims = verifySession(cookie, sessionSecret, now);
  if (!claims) return null;
  const rows: { id: string; email: string }[] = await db.query('SELECT id, email FROM users WHERE id = $1', [
    claims.uid,
  ]);
  return rows[0] ? { userId: rows[0].id, email: rows[0].email } : null;
}
