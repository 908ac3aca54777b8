import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Envelope encryption of secrets at rest (.p12 files, their passwords, CAF private keys).
 *
 * Each secret gets its own random 256-bit data key; the secret is encrypted with AES-256-GCM
 * under that data key, and the data key is wrapped (AES-256-GCM again) by the master key of a
 * KeyWrapper — a local key from MASTER_KEY here, a KMS in a deployment that has one. The
 * stored form is JSON:
 *
 *   { v: 1, alg: "A256GCM", kid, wk: base64(iv12 | tag16 | wrapped key), ct: base64(iv12 | tag16 | ciphertext) }
 *
 * Both layers authenticate `aad`, a string naming what the secret is and where it belongs
 * (`certificate:<id>:p12`), so a sealed value copied onto another row does not open.
 */
export interface SealedSecret {
  v: 1;
  alg: 'A256GCM';
  kid: string;
  wk: string;
  ct: string;
}

/** The key-encryption side: a local master key or a KMS client. */
export interface KeyWrapper {
  wrap(dataKey: Buffer, aad: string): Promise<{ kid: string; wrapped: Buffer }>;
  unwrap(kid: string, wrapped: Buffer, aad: string): Promise<Buffer>;
}

/** The master key is not there (not configured, unknown key id, KMS down): transient for the caller. */
export class KmsUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KmsUnavailableError';
  }
}

/** The sealed value does not authenticate (tampered, wrong row, wrong key material). */
export class KmsAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KmsAuthError';
  }
}

function gcmEncrypt(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]);
}

function gcmDecrypt(key: Buffer, blob: Buffer, aad: string): Buffer {
  if (blob.length < 28) throw new KmsAuthError('sealed value too short');
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(blob.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
  } catch {
    throw new KmsAuthError('sealed value does not authenticate');
  }
}

/** Master keys held in process memory, keyed by id; `currentId` wraps new data keys. */
export class LocalKeyWrapper implements KeyWrapper {
  private readonly keys: Map<string, Buffer>;

  constructor(
    keys: Record<string, Buffer>,
    private readonly currentId: string | null,
  ) {
    this.keys = new Map(Object.entries(keys));
    for (const [id, key] of this.keys)
      if (key.length !== 32) throw new Error(`master key ${id} must be 32 bytes`);
  }

  async wrap(dataKey: Buffer, aad: string): Promise<{ kid: string; wrapped: Buffer }> {
    const key = this.currentId === null ? undefined : this.keys.get(this.currentId);
    if (!key || this.currentId === null) throw new KmsUnavailableError('no master key configured');
    return { kid: this.currentId, wrapped: gcmEncrypt(key, dataKey, `wrap:${aad}`) };
  }

  async unwrap(kid: string, wrapped: Buffer, aad: string): Promise<Buffer> {
    const key = this.keys.get(kid);
    if (!key) throw new KmsUnavailableError(`master key ${kid} is not available`);
    return gcmDecrypt(key, wrapped, `wrap:${aad}`);
  }
}

export async function seal(wrapper: KeyWrapper, plaintext: Buffer, aad: string): Promise<SealedSecret> {
  const dataKey = randomBytes(32);
  try {
    const { kid, wrapped } = await wrapper.wrap(dataKey, aad);
    return {
      v: 1,
      alg: 'A256GCM',
      kid,
      wk: wrapped.toString('base64'),
      ct: gcmEncrypt(dataKey, plaintext, aad).toString('base64'),
    };
  } finally {
    dataKey.fill(0);
  }
}

export async function open(wrapper: KeyWrapper, sealed: unknown, aad: string): Promise<Buffer> {
  const s = sealed as Partial<SealedSecret> | null;
  if (!s || s.v !== 1 || s.alg !== 'A256GCM' || typeof s.kid !== 'string' || !s.wk || !s.ct) {
    throw new KmsAuthError('not a sealed secret of version 1');
  }
  const dataKey = await wrapper.unwrap(s.kid, Buffer.from(s.wk, 'base64'), aad);
  try {
    return gcmDecrypt(dataKey, Buffer.from(s.ct, 'base64'), aad);
  } finally {
    dataKey.fill(0);
  }
}
