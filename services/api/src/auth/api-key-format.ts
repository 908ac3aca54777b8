import { createHash, randomBytes } from 'node:crypto';
import type { SiiEnv } from '@dte/tenancy';

/**
 * API key format: `sk_<env>_<secret>` where env is `cert` or `prod` and secret is 32 random
 * bytes in base64url (43 characters), e.g. `sk_cert_Q2x...`. The database keeps only the hex
 * SHA-256 of the whole key (lookup by hash: a 256-bit random secret needs no slow hash) and a
 * display prefix: the environment marker plus the first 8 characters of the secret.
 */
export const API_KEY_PATTERN = /^sk_(cert|prod)_([A-Za-z0-9_-]{43})$/;

export interface NewApiKey {
  key: string;
  prefix: string;
  hash: string;
  environment: SiiEnv;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateApiKey(environment: SiiEnv): NewApiKey {
  const secret = randomBytes(32).toString('base64url');
  const key = `sk_${environment}_${secret}`;
  return { key, prefix: apiKeyPrefix(key), hash: hashApiKey(key), environment };
}

/** The display prefix of a well-formed key: `sk_<env>_` and the first 8 characters of its secret. */
export function apiKeyPrefix(key: string): string {
  const m = API_KEY_PATTERN.exec(key);
  if (!m) throw new Error('not an API key');
  return `sk_${m[1]}_${m[2]!.slice(0, 8)}`;
}

/** The environment a well-formed key declares, or null for anything that is not a key of ours. */
export function parseApiKey(key: string): { environment: SiiEnv } | null {
  const m = API_KEY_PATTERN.exec(key);
  return m ? { environment: m[1] as SiiEnv } : null;
}
