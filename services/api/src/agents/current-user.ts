import type { IncomingMessage } from 'node:http';
import type { DataSource } from 'typeorm';
import type { DashboardUser } from '@dte/oauth-server';
import type { SessionStore } from '@dte/accounts';
import type { Config } from '../config';
import { sessionCookieName } from '../auth/session';

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/**
 * THE seam between the OAuth consent step and the dashboard's accounts: who is signed in on this
 * request. It reads the dashboard session cookie (issued by POST /auth/login, a Redis session of
 * @dte/accounts' SessionStore, the same one every session route uses) and the user row. With no
 * session the authorization server shows a link to the dashboard login (DASHBOARD_LOGIN_URL).
 */
export async function currentDashboardUser(
  db: DataSource,
  sessions: SessionStore,
  config: Pick<Config, 'sessionCookieSecure'>,
  req: IncomingMessage,
  now: Date,
): Promise<DashboardUser | null> {
  const id = cookieValue(req.headers.cookie, sessionCookieName(config));
  if (!id) return null;
  const session = await sessions.get(id, now);
  if (!session) return null;
  const rows: { id: string; email: string }[] = await db.query('SELECT id, email FROM users WHERE id = $1', [
    session.uid,
  ]);
  return rows[0] ? { userId: rows[0].id, email: rows[0].email } : null;
}
