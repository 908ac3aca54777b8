/**
 * The signing credentials of the `certificates` table, opened on demand and kept in memory for a
 * while: the workers that call the SII on behalf of a certificate (sii-uploader, sii-poller)
 * open each one once per `ttlMs` instead of once per envelope or query.
 */
import type { SigningCredential } from '@dte/engine';

import { openSigningCredential } from './credentials';
import { KmsAuthError, KmsUnavailableError, type KeyWrapper } from './envelope';

/** What reading a certificate row needs: a typeorm DataSource or EntityManager. */
export interface CertificateSource {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * The certificate does not exist or its stored material cannot be opened; retrying will not
 * help. A KMS that cannot be reached is not this: KmsUnavailableError passes through.
 */
export class UnusableCertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnusableCertificateError';
  }
}

export const STORED_CREDENTIAL_TTL_MS = 5 * 60 * 1000;

/** Opened credentials kept at most (the oldest are dropped first). */
export const STORED_CREDENTIAL_MAX_ENTRIES = 1000;

/**
 * Each `get` checks that the row still exists and is not deleted (`deleted_at`), also when the
 * credential is in memory (one primary-key read, far cheaper than opening the .p12): a deleted
 * certificate is never used again. Expired entries are evicted as they are met and by a sweep on
 * each open; a certificate whose validity ended (`not_after`) is dropped too. Opening runs on a
 * worker thread with a hard time limit (readP12OffThread).
 */
export class StoredCredentials {
  private readonly cache = new Map<string, { credential: SigningCredential; until: number }>();

  constructor(
    private readonly opts: {
      db: CertificateSource;
      keys: KeyWrapper;
      /** epoch ms now (the owner's clock) */
      now: () => number;
      /** how long an opened credential is reused (ms) */
      ttlMs?: number;
    },
  ) {}

  /**
   * The credential of that certificate, from memory while it lasts, else opened from its row.
   * `seenLive`: the caller has just read, in a statement of its own, that the row exists and is
   * not deleted (e.g. `EXISTS (… deleted_at IS NULL)` beside the rows it works on), so a credential
   * in memory is returned without reading the row again.
   */
  async get(certificateId: string, opts: { seenLive?: boolean } = {}): Promise<SigningCredential> {
    const now = this.opts.now();
    const hit = this.cache.get(certificateId);
    if (hit && hit.until > now && hit.credential.info.notAfter.getTime() > now) {
      if (opts.seenLive) return hit.credential;
      const live = (await this.opts.db.query(
        'SELECT id FROM certificates WHERE id = $1 AND deleted_at IS NULL',
        [certificateId],
      )) as unknown[];
      if (live.length > 0) return hit.credential;
    }
    this.cache.delete(certificateId);
    const rows = (await this.opts.db.query(
      'SELECT id, p12_sealed, password_sealed, deleted_at FROM certificates WHERE id = $1',
      [certificateId],
    )) as { id: string; p12_sealed: unknown; password_sealed: unknown; deleted_at: Date | null }[];
    if (!rows[0]) throw new UnusableCertificateError(`certificate ${certificateId} does not exist`);
    if (rows[0].deleted_at !== null && rows[0].deleted_at !== undefined) {
      throw new UnusableCertificateError(`certificate ${certificateId} was deleted`);
    }
    let credential: SigningCredential;
    try {
      credential = await openSigningCredential(this.opts.keys, {
        id: rows[0].id,
        p12Sealed: rows[0].p12_sealed,
        passwordSealed: rows[0].password_sealed,
      });
    } catch (err) {
      if (err instanceof KmsUnavailableError) throw err;
      const how = err instanceof KmsAuthError ? 'decrypted' : 'opened';
      throw new UnusableCertificateError(
        `the stored certificate cannot be ${how}: ${(err as Error).message}`,
      );
    }
    this.evictExpired(now);
    this.cache.set(certificateId, {
      credential,
      until: now + (this.opts.ttlMs ?? STORED_CREDENTIAL_TTL_MS),
    });
    return credential;
  }

  /** How many opened credentials are held (expired ones included until the next sweep). */
  get size(): number {
    return this.cache.size;
  }

  /** Drops the entries whose TTL or certificate validity has passed, and the oldest beyond the cap. */
  evictExpired(now = this.opts.now()): void {
    for (const [id, e] of this.cache) {
      if (e.until <= now || e.credential.info.notAfter.getTime() <= now) this.cache.delete(id);
    }
    for (const id of this.cache.keys()) {
      if (this.cache.size < STORED_CREDENTIAL_MAX_ENTRIES) break;
      this.cache.delete(id);
    }
  }
}
