/**
 * Authentication (the SII's "autenticación automática" manual, PROTOCOL.md §2): CrSeed.getSeed
 * gives a seed, the certificate owner signs `<getToken><item><Semilla>…` (the DTE engine's
 * `signSeedDocument`), GetTokenFromSeed.getToken trades it for a token.
 */
import type { SigningCredential } from '@dte/engine';

import { rpcNamespace, serviceUrl, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { parseRespuesta, requireEstado, bodyValue } from './respuesta';
import { readRpcReturn, rpcEnvelope } from './soap';
import { endpointsOf, postSoap, type CallOptions, type SiiTransport } from './transport';
import { excerpt } from './xml';

/** Signs the seed document; the engine's `signSeedDocument` by default. */
export type SeedSigner = (seed: string, credential: SigningCredential) => string | Promise<string>;

/** CrSeed ESTADO codes other than 00 (seed created). */
const SEED_ESTADOS: Readonly<Record<string, string>> = {
  '-1': 'error (no line in the configuration file, Message Exception)',
  '-2': 'ERROR RETORNO (database, or cannot create/update the seed)',
};

export async function getSeed(t: SiiTransport, env: SiiEnvironment, opts: CallOptions = {}): Promise<string> {
  const operation = 'CrSeed.getSeed';
  const url = serviceUrl(endpointsOf(t, env), 'crSeed');
  const reply = await postSoap(
    t,
    url,
    rpcEnvelope(rpcNamespace(env, 'crSeed'), 'getSeed', []),
    operation,
    opts,
  );
  const r = parseRespuesta(readRpcReturn(reply, 'getSeed', operation), operation);
  const estado = requireEstado(r, operation);
  if (estado !== '00') {
    // Both documented failures are the SII's own trouble: a new seed later may work.
    throw new SiiError(
      'transient',
      `${operation}: ESTADO ${estado} ${SEED_ESTADOS[estado] ?? '(undocumented)'}`,
      {
        operation,
        siiCode: estado,
        ...(r.hdr.GLOSA ? { glosa: r.hdr.GLOSA } : {}),
        responseExcerpt: excerpt(r.raw),
      },
    );
  }
  const seed = bodyValue(r, 'SEMILLA');
  // Kept as text: whether its leading zeros matter is UNCONFIRMED, so they are never dropped.
  if (!seed || !/^\d+$/.test(seed)) {
    throw new SiiError('protocol', `${operation}: ESTADO 00 without a numeric SEMILLA`, {
      operation,
      responseExcerpt: excerpt(r.raw),
    });
  }
  return seed;
}

/**
 * GetTokenFromSeed ESTADO codes other than 00, with how each is treated: `transient` for the
 * SII's own failures and a stale seed (a new seed may work), `auth` (not retryable) when the
 * signed seed or the certificate is refused: retrying the same certificate gives the same answer.
 */
const TOKEN_ESTADOS: Readonly<Record<string, { kind: 'transient' | 'auth'; text: string }>> = {
  '01': { kind: 'auth', text: 'invalid XML (IOException)' },
  '02': { kind: 'auth', text: 'invalid XML (SAXException)' },
  '03': { kind: 'auth', text: 'invalid XML (ParserConfigurationException)' },
  '04': { kind: 'auth', text: 'no Signature element' },
  '05': { kind: 'auth', text: 'invalid signature' },
  '06': { kind: 'auth', text: 'no Semilla element' },
  '07': { kind: 'transient', text: 'ERROR (MessageException)' },
  '08': {
    kind: 'transient',
    text: 'ERROR RETORNO (seed timed out, unknown or already used, or token not created)',
  },
  '09': { kind: 'transient', text: 'ERROR (MessageException)' },
  '10': { kind: 'transient', text: 'ERROR RETORNO DATOS (cannot create or update the token)' },
  '11': { kind: 'auth', text: 'no Certificate element' },
  '12': { kind: 'transient', text: 'ERROR (12) MessageException' },
  '21': { kind: 'auth', text: "invalid signature: the public key does not match the certificate's" },
  '-3': { kind: 'auth', text: 'authentication error' },
  '-07': { kind: 'auth', text: 'RUT not registered at the SII for certificate authentication' },
};

export async function getTokenFromSeed(
  t: SiiTransport,
  env: SiiEnvironment,
  signedSeedXml: string,
  opts: CallOptions = {},
): Promise<string> {
  const operation = 'GetTokenFromSeed.getToken';
  const url = serviceUrl(endpointsOf(t, env), 'getTokenFromSeed');
  const envelope = rpcEnvelope(rpcNamespace(env, 'getTokenFromSeed'), 'getToken', [
    ['pszXml', signedSeedXml],
  ]);
  const reply = await postSoap(t, url, envelope, operation, opts);
  const r = parseRespuesta(readRpcReturn(reply, 'getToken', operation), operation);
  const estado = requireEstado(r, operation);
  if (estado !== '00') {
    const known = TOKEN_ESTADOS[estado] ?? TOKEN_ESTADOS[estado.replace(/^(-?)0+(?=\d)/, '$1')];
    const glosa = r.hdr.GLOSA;
    throw new SiiError(
      known?.kind ?? 'protocol',
      `${operation}: ESTADO ${estado} ${known?.text ?? '(undocumented)'}${glosa ? `: ${glosa}` : ''}`,
      { operation, siiCode: estado, ...(glosa ? { glosa } : {}), retryable: known?.kind === 'transient' },
    );
  }
  const token = bodyValue(r, 'TOKEN');
  if (!token || !/^[\x21-\x7e]+$/.test(token) || /[;,]/.test(token)) {
    throw new SiiError('protocol', `${operation}: ESTADO 00 without a usable TOKEN`, {
      operation,
      responseExcerpt: excerpt(r.raw),
    });
  }
  return token;
}

/**
 * Where tokens are kept between calls (and, with a shared store such as Redis, between
 * processes). Keys are made by the client: environment + certificate fingerprint.
 */
export interface TokenCache {
  get(key: string): Promise<string | undefined>;
  /** keep `token` under `key` for `ttlSeconds` */
  set(key: string, token: string, ttlSeconds: number): Promise<void>;
  /**
   * Drop the token under `key`. When `token` is given, drop it only if the cache still holds
   * that token, so a token another process just renewed is not thrown away.
   */
  delete(key: string, token?: string): Promise<void>;
}

/** A process-local TokenCache with expiry; the clock is injectable for tests. */
export class InMemoryTokenCache implements TokenCache {
  private readonly entries = new Map<string, { token: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async get(key: string): Promise<string | undefined> {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.token;
  }

  async set(key: string, token: string, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) throw new RangeError(`token TTL must be positive, got ${ttlSeconds}`);
    this.entries.set(key, { token, expiresAt: this.now() + ttlSeconds * 1000 });
  }

  async delete(key: string, token?: string): Promise<void> {
    const e = this.entries.get(key);
    if (e && (token === undefined || e.token === token)) this.entries.delete(key);
  }
}

/**
 * How long a token is reused. The SII's token lifetime is UNCONFIRMED (the manual does not say;
 * LibreDTE caches 60 s, Odoo reuses a token until it is refused). 300 s keeps the number of
 * logins small under steady load while staying far below any lifetime reported in practice;
 * and a token refused earlier costs one extra login, because every call made through
 * `withToken` drops the token and retries once.
 */
export const DEFAULT_TOKEN_TTL_SECONDS = 300;

export function tokenCacheKey(prefix: string, env: SiiEnvironment, credential: SigningCredential): string {
  return `${prefix}:${env}:${credential.info.fingerprintSha256}`;
}
