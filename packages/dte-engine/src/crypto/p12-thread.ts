/**
 * readP12 on a worker thread with a hard time limit, so that opening a certificate never blocks
 * the event loop of a server (the api on upload, the signer, uploader and poller on each open).
 * One serial worker per process (`../worker/serial-worker`): started on first use and kept,
 * jobs one at a time in arrival order. A job that outlives its limit terminates the worker (a
 * fresh one serves the next job) and fails with `cert.invalid`.
 */
import { ServiceError } from '@dte/error-catalog';

import { SerialWorker } from '../worker/serial-worker';
import { readP12, type SigningCredential } from './certificate';
import { checkP12Iterations } from './p12-limits';

/** Hard limit on one .p12 open, queueing excluded (ms); a bounded file opens in 20–100 ms. */
export const P12_OPEN_TIMEOUT_MS = 5_000;
/** Opens waiting for the worker at most; one more answers `cert.invalid` (try later). */
export const P12_OPEN_QUEUE_MAX = 256;

type P12Opened = { ok: true; credential: SigningCredential } | { ok: false; message: string };

/**
 * Runs in the worker: readP12, its `cert.invalid` refusal as data (any other error fails the
 * job); the file's bytes are zeroed once read.
 */
export function openP12Job(job: { p12: Uint8Array; password: string }): P12Opened {
  const p12 = Buffer.from(job.p12.buffer, job.p12.byteOffset, job.p12.byteLength);
  try {
    return { ok: true, credential: readP12(p12, job.password) };
  } catch (err) {
    if ((err as { code?: unknown }).code === 'cert.invalid')
      return { ok: false, message: (err as Error).message };
    throw err;
  } finally {
    p12.fill(0);
  }
}

const p12Worker = new SerialWorker({
  handler: { module: __filename, fn: openP12Job },
  name: 'certificate',
  heapMb: 128,
  queueMax: P12_OPEN_QUEUE_MAX,
  busy: () =>
    new ServiceError('cert.invalid', 'too many certificates are being opened at once; try again', {}),
  timedOut: (timeoutMs) =>
    new ServiceError(
      'cert.invalid',
      `the .p12 file took longer than ${timeoutMs} ms to open; it is refused`,
      {},
    ),
});

/**
 * readP12 off the event loop, within `timeoutMs` (P12_OPEN_TIMEOUT_MS by default): the same
 * answer (a SigningCredential, or `cert.invalid` with its reason), or `cert.invalid` when the
 * file takes too long to open.
 */
export async function readP12OffThread(
  p12: Buffer,
  password: string,
  opts: { timeoutMs?: number } = {},
): Promise<SigningCredential> {
  // the visible counts are refused here at once, with no derivation and no wait for the worker
  checkP12Iterations(p12, password, { inspectEncrypted: false });
  // a copy of its own that moves to the worker: the caller's buffer is left as it was, and no
  // copy stays on this thread once sent (one refused before that is zeroed)
  const copy = new Uint8Array(p12);
  try {
    const opened = await p12Worker.run(
      { p12: copy, password },
      { timeoutMs: opts.timeoutMs ?? P12_OPEN_TIMEOUT_MS, transfer: [copy.buffer] },
    );
    if (!opened.ok) throw new ServiceError('cert.invalid', opened.message, {});
    return opened.credential;
  } finally {
    if (copy.byteLength > 0) copy.fill(0);
  }
}
