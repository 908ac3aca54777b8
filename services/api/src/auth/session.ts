import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The dashboard session cookie: `dte_session=<payload>.<mac>` where payload is base64url JSON
 * `{uid, org, exp}` (user id, current organization or null, expiry in unix seconds) and mac is
 * base64url HMAC-SHA256 of the payload with SESSION_SECRET. The cookie proves who the user is
 * and which organization they chose; the role is NOT trusted from the cookie: each request
 * reads the membership (user, organization) from the database, so removing a member or
 * changing a role takes effect at once. Whoever runs the dashboard login issues the cookie
 * with `signSession` (HttpOnly, Secure, SameSite=Lax); this api only verifies it.
 */
export const SESSION_COOKIE = 'dte_session';

export interface SessionClaims {
  uid: string;
  org: string | null;
  exp: number;
}

function mac(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function signSession(claims: SessionClaims, secret: string): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${mac(payload, secret)}`;
}

/** Claims of a valid unexpired cookie value, or null for anything forged, malformed or expired. */
export function verifySession(value: string, secret: string, now: Date): SessionClaims | null {
  const [payload, sig, extra] = value.split('.');
  if (!payload || !sig || extra !== undefined) return null;
  const expected = Buffer.from(mac(payload, secret));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  let claims: SessionClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionClaims;
  } catch {
    return null;
  }
  if (typeof claims.uid !== 'string' || typeof claims.exp !== 'number') return null;
  if (claims.org !== null && typeof claims.org !== 'string') return null;
  if (claims.exp * 1000 <= now.getTime()) return null;
  return claims;
}
