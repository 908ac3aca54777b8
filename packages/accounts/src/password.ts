import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ServiceError } from '@dte/error-catalog';

/**
 * Password hashing with node's built-in scrypt (memory-hard). Stored form:
 * `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`, so the parameters can be raised later and
 * old hashes still verify. Default N=2^17, r=8, p=1 (128 MiB per hash, OWASP's recommendation).
 */
export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LEN = 32;

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

/**
 * How many hashes (or verifications) run at once in this process, and how many may wait for a
 * turn: each takes 128 MiB on the libuv pool, so a burst of sign-ups or logins cannot take the
 * pod's memory (two at once: 256 MiB). One more than `queue` waiting is refused at once with 429
 * rate_limit (retryAfterSec 1), never queued without bound. The api sets them from
 * PASSWORD_HASH_CONCURRENCY and PASSWORD_HASH_QUEUE.
 */
export interface PasswordHashingBound {
  concurrency: number;
  queue: number;
}

let bound: PasswordHashingBound = { concurrency: 2, queue: 16 };
let running = 0;
let peak = 0;
const waiting: (() => void)[] = [];

export function boundPasswordHashing(b: PasswordHashingBound): void {
  bound = { concurrency: Math.max(1, b.concurrency), queue: Math.max(0, b.queue) };
}

/** The most hashes that ran at once since the last call (then reset to those running now). */
export function passwordHashPeak(): number {
  const p = peak;
  peak = running;
  return p;
}

async function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= bound.concurrency) {
    if (waiting.length >= bound.queue) {
      throw new ServiceError('rate_limit', 'Demasiadas contraseñas en proceso; reintenta en un momento.', {
        detail: { retryAfterSec: 1 },
      });
    }
    await new Promise<void>((resolve) => waiting.push(resolve)); // the turn is handed over as is
  } else {
    running += 1;
    peak = Math.max(peak, running);
  }
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

function scrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  return inTurn(() => scryptNow(password, salt, params));
}

function scryptNow(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const opts: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFKC'), salt, KEY_LEN, opts, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** True when `password` matches `stored`; false for a malformed stored value. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((x) => Number.isInteger(x) && x > 0)) return false;
  const expected = Buffer.from(parts[5], 'base64url');
  const got = await scrypt(password, Buffer.from(parts[4], 'base64url'), { N, r, p });
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** A hash of a random password, to spend the same time when the e-mail is unknown. */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  return (dummy ??= hashPassword(randomBytes(16).toString('hex')));
}
