/**
 * SiiClient: the SII's web services for one process, with its endpoints, deadlines, User-Agent
 * and token cache. Each call names the environment (`cert` or `prod`).
 *
 * Tokens: `getToken` returns a cached token or logs in (seed → signed seed → token) and caches
 * the new one for `tokenTtlSeconds`. `withToken` runs a call with a token and, when the SII
 * refuses that token (an `auth` SiiError, or a result the caller marks as a token refusal),
 * drops it from the cache and retries once with a new one.
 */
import { signSeedDocument, type SigningCredential } from '@dte/engine';

import {
  DEFAULT_TOKEN_TTL_SECONDS,
  getSeed,
  getTokenFromSeed,
  InMemoryTokenCache,
  tokenCacheKey,
  type SeedSigner,
  type TokenCache,
} from './auth';
import {
  resolveEndpoints,
  type SiiEndpointOverrides,
  type SiiEndpoints,
  type SiiEnvironment,
} from './endpoints';
import { isTokenError, SiiError } from './errors';
import { requestFolios, type FolioRequest } from './folios';
import { readRcv, type RcvQuery, type RcvRegistro } from './rcv';
import {
  consultarDocDteCedible,
  consultarFechaRecepcionSii,
  ingresarAceptacionReclamoDoc,
  listarEventosHistDoc,
  type AccionDoc,
  type RegisterAnswer,
  type RegisterDocRef,
  type RegisterHistory,
} from './register';
import {
  queryDocumentStatus,
  queryUploadStatus,
  type DocumentStatus,
  type DocumentStatusQuery,
  type UploadStatus,
  type UploadStatusQuery,
} from './status';
import {
  DEFAULT_TIMEOUT_MS,
  DEFAULT_UPLOAD_TIMEOUT_MS,
  DEFAULT_USER_AGENT,
  type CallOptions,
  type SiiTransport,
} from './transport';
import { uploadEnvio, type UploadEnvioInput, type UploadOutcome } from './upload';

export interface SiiClientOptions {
  /** per environment overrides of the real SII's URLs (a simulator, a proxy) */
  endpoints?: SiiEndpointOverrides | SiiEndpoints;
  /** deadline of SOAP calls, ms (default 30 000) */
  timeoutMs?: number;
  /** deadline of DTEUpload POSTs, ms (default 120 000) */
  uploadTimeoutMs?: number;
  userAgent?: string;
  /** default: an InMemoryTokenCache (services pass a shared one, e.g. Redis) */
  tokenCache?: TokenCache;
  /** default DEFAULT_TOKEN_TTL_SECONDS (300) */
  tokenTtlSeconds?: number;
  /** prefix of token cache keys (default `sii:token`) */
  tokenCacheKeyPrefix?: string;
  /** signs the seed document; default: @dte/engine signSeedDocument */
  signSeed?: SeedSigner;
}

export interface GetTokenOptions extends CallOptions {
  /** skip the cache and log in again (the new token replaces the cached one) */
  fresh?: boolean;
}

export interface WithTokenOptions<T> extends CallOptions {
  /** for calls that report a refused token as a result instead of throwing (DTEUpload STATUS 5) */
  tokenRefused?: (result: T) => boolean;
}

export interface SendEnvioInput extends Omit<UploadEnvioInput, 'token' | 'rutSender'> {
  credential: SigningCredential;
  /** default: the certificate owner's RUT (credential.info.rut) */
  rutSender?: string;
}

export class SiiClient {
  readonly transport: SiiTransport;
  readonly tokenTtlSeconds: number;
  private readonly cache: TokenCache;
  private readonly keyPrefix: string;
  private readonly signSeed: SeedSigner;
  /** one login at a time per cache key in this process */
  private readonly logins = new Map<string, Promise<string>>();

  constructor(options: SiiClientOptions = {}) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const uploadTimeoutMs = options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
    for (const [name, v] of [
      ['timeoutMs', timeoutMs],
      ['uploadTimeoutMs', uploadTimeoutMs],
    ] as const) {
      if (!Number.isFinite(v) || v <= 0)
        throw new RangeError(`${name} must be a positive number of ms, got ${v}`);
    }
    this.tokenTtlSeconds = options.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
    if (!Number.isFinite(this.tokenTtlSeconds) || this.tokenTtlSeconds <= 0) {
      throw new RangeError(`tokenTtlSeconds must be positive, got ${this.tokenTtlSeconds}`);
    }
    this.transport = {
      endpoints: resolveEndpoints(options.endpoints ?? {}),
      timeoutMs,
      uploadTimeoutMs,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    };
    this.cache = options.tokenCache ?? new InMemoryTokenCache();
    this.keyPrefix = options.tokenCacheKeyPrefix ?? 'sii:token';
    this.signSeed = options.signSeed ?? signSeedDocument;
  }

  /** The calls on behalf of one certificate, tokens handled (renewed once when refused). */
  session(credential: SigningCredential): SiiSession {
    return new SiiSession(this, credential);
  }

  getSeed(env: SiiEnvironment, opts: CallOptions = {}): Promise<string> {
    return getSeed(this.transport, env, opts);
  }

  /** A token for this certificate in this environment: from the cache, or a new login. */
  async getToken(
    env: SiiEnvironment,
    credential: SigningCredential,
    opts: GetTokenOptions = {},
  ): Promise<string> {
    const key = tokenCacheKey(this.keyPrefix, env, credential);
    if (!opts.fresh) {
      const cached = await this.cache.get(key);
      if (cached) return cached;
    }
    let login = this.logins.get(key);
    if (!login) {
      // Shared by every caller waiting for this key, so it runs on the client's own deadlines:
      // one caller's AbortSignal must not fail the others.
      login = (async () => {
        const seed = await getSeed(this.transport, env);
        const signed = await this.signSeed(seed, credential);
        const token = await getTokenFromSeed(this.transport, env, signed);
        await this.cache.set(key, token, this.tokenTtlSeconds);
        return token;
      })().finally(() => this.logins.delete(key));
      this.logins.set(key, login);
      login.catch(() => undefined); // every waiter gets the error; none left unhandled
    }
    return waitUnlessAborted(login, opts.signal);
  }

  /** Drops a token from the cache (only that token, when given). */
  invalidateToken(env: SiiEnvironment, credential: SigningCredential, token?: string): Promise<void> {
    return this.cache.delete(tokenCacheKey(this.keyPrefix, env, credential), token);
  }

  /**
   * Runs `call` with a token; when the SII refuses the token, drops it and runs `call` once more
   * with a new one. A second refusal reaches the caller.
   */
  async withToken<T>(
    env: SiiEnvironment,
    credential: SigningCredential,
    call: (token: string) => Promise<T>,
    opts: WithTokenOptions<T> = {},
  ): Promise<T> {
    const token = await this.getToken(env, credential, opts);
    try {
      const result = await call(token);
      if (!opts.tokenRefused?.(result)) return result;
    } catch (err) {
      if (!isTokenError(err)) throw err;
    }
    await this.invalidateToken(env, credential, token);
    let fresh = await this.getToken(env, credential, opts);
    if (fresh === token) fresh = await this.getToken(env, credential, { ...opts, fresh: true });
    return call(fresh);
  }

  uploadEnvio(input: UploadEnvioInput): Promise<UploadOutcome> {
    return uploadEnvio(this.transport, input);
  }

  /**
   * uploadEnvio with this certificate's token, renewed once if the SII answers STATUS 5. Every
   * answer of DTEUpload is an UploadOutcome; only a failed login (getting the token) throws its
   * SiiError, before anything is uploaded.
   */
  sendEnvio(input: SendEnvioInput): Promise<UploadOutcome> {
    const { credential, rutSender, ...rest } = input;
    return this.withToken(
      input.env,
      credential,
      (token) => uploadEnvio(this.transport, { ...rest, token, rutSender: rutSender ?? credential.info.rut }),
      { ...callOpts(input), tokenRefused: (o) => o.kind === 'auth' },
    );
  }

  queryUploadStatus(q: UploadStatusQuery): Promise<UploadStatus> {
    return queryUploadStatus(this.transport, q);
  }

  queryDocumentStatus(q: DocumentStatusQuery): Promise<DocumentStatus> {
    return queryDocumentStatus(this.transport, q);
  }

  ingresarAceptacionReclamoDoc(q: RegisterDocRef & { accionDoc: AccionDoc }): Promise<RegisterAnswer> {
    return ingresarAceptacionReclamoDoc(this.transport, q);
  }

  listarEventosHistDoc(q: RegisterDocRef): Promise<RegisterHistory> {
    return listarEventosHistDoc(this.transport, q);
  }

  consultarDocDteCedible(q: RegisterDocRef): Promise<RegisterAnswer> {
    return consultarDocDteCedible(this.transport, q);
  }

  consultarFechaRecepcionSii(q: RegisterDocRef): Promise<string> {
    return consultarFechaRecepcionSii(this.transport, q);
  }

  /** A folio grant (the simulator's `POST {base}/folios`): resolves to the CAF XML text. */
  requestFolios(q: FolioRequest): Promise<string> {
    return requestFolios(this.transport, q);
  }

  /** One side (ventas or compras) of the RCV of a company and period. */
  readRcv(q: RcvQuery): Promise<RcvRegistro> {
    return readRcv(this.transport, q);
  }
}

/** `promise`, or a transient SiiError as soon as `signal` aborts (the promise keeps running). */
function waitUnlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  const aborted = (): SiiError =>
    new SiiError('transient', 'SII login: aborted by the caller', {
      operation: 'getToken',
      cause: signal.reason,
    });
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * SiiSession: the client's calls on behalf of one certificate, with the token handled: each call
 * takes a cached token (or logs in), and when the SII refuses it, drops it and retries once
 * (`SiiClient.withToken`). This is how services should call the SII; the token-taking methods of
 * SiiClient stay for callers that manage tokens themselves.
 */
type WithoutToken<T> = Omit<T, 'token'>;

export class SiiSession {
  constructor(
    readonly client: SiiClient,
    readonly credential: SigningCredential,
  ) {}

  /**
   * DTEUpload; rutSender defaults to the certificate owner; STATUS 5 renews the token once. A
   * failed login throws its SiiError (nothing was uploaded); every DTEUpload answer is an outcome.
   */
  uploadEnvio(
    input: Omit<UploadEnvioInput, 'token' | 'rutSender'> & { rutSender?: string },
  ): Promise<UploadOutcome> {
    return this.client.sendEnvio({ ...input, credential: this.credential });
  }

  queryUploadStatus(q: WithoutToken<UploadStatusQuery>): Promise<UploadStatus> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.queryUploadStatus({ ...q, token }),
      callOpts(q),
    );
  }

  /** rutConsultante defaults to the certificate owner */
  queryDocumentStatus(
    q: Omit<WithoutToken<DocumentStatusQuery>, 'rutConsultante'> & { rutConsultante?: string },
  ): Promise<DocumentStatus> {
    const rutConsultante = q.rutConsultante ?? this.credential.info.rut;
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.queryDocumentStatus({ ...q, rutConsultante, token }),
      callOpts(q),
    );
  }

  ingresarAceptacionReclamoDoc(
    q: WithoutToken<RegisterDocRef> & { accionDoc: AccionDoc },
  ): Promise<RegisterAnswer> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.ingresarAceptacionReclamoDoc({ ...q, token }),
      callOpts(q),
    );
  }

  listarEventosHistDoc(q: WithoutToken<RegisterDocRef>): Promise<RegisterHistory> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.listarEventosHistDoc({ ...q, token }),
      callOpts(q),
    );
  }

  consultarDocDteCedible(q: WithoutToken<RegisterDocRef>): Promise<RegisterAnswer> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.consultarDocDteCedible({ ...q, token }),
      callOpts(q),
    );
  }

  consultarFechaRecepcionSii(q: WithoutToken<RegisterDocRef>): Promise<string> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.consultarFechaRecepcionSii({ ...q, token }),
      callOpts(q),
    );
  }

  /**
   * A folio grant for `rutCompany` with this certificate's token (renewed once on HTTP 401):
   * resolves to the CAF XML text. A failed login throws its SiiError (nothing was asked).
   */
  requestFolios(q: WithoutToken<FolioRequest>): Promise<string> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.requestFolios({ ...q, token }),
      callOpts(q),
    );
  }

  /** One side of the RCV with this certificate's token (renewed once on HTTP 401). */
  readRcv(q: WithoutToken<RcvQuery>): Promise<RcvRegistro> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.readRcv({ ...q, token }),
      callOpts(q),
    );
  }
}

export function callOpts(o: CallOptions): CallOptions {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  };
}
