/**
 * readP12 on a worker thread with a hard time limit, so that opening a certificate never blocks
 * the event loop of a server (the api on upload, the signer, uploader and poller on each open).
 * One worker per process, started on first use and kept (unref'd); jobs run one at a time in
 * arrival order. A job that outlives its limit terminates the worker (a fresh one serves the
 * next job) and fails with `cert.invalid`.
 */
import { Worker } from 'node:worker_threads';

import { ServiceError } from '@dte/error-catalog';

import type { SigningCredential } from './certificate';
import { checkP12Iterations } from './p12-limits';

/** Hard limit on one .p12 open, queueing excluded (ms); a bounded file opens in 20–100 ms. */
export const P12_OPEN_TIMEOUT_MS = 5_000;
/** Opens waiting for the worker at most; one more answers `cert.invalid` (try later). */
export const P12_OPEN_QUEUE_MAX = 256;

interface Job {
  id: number;
  p12: Buffer;
  password: string;
  timeoutMs: number;
  resolve: (c: SigningCredential) => void;
  reject: (e: Error) => void;
}

type Reply =
  | { ready: true; id?: undefined }
  | { id: number; ok: true; credential: SigningCredential }
  | { id: number; ok: false; code: string | null; message: string };

// From the TypeScript sources (tsx, mocha) the worker registers tsx's require hook first (the main
// thread's hook does not reach a worker), then reads with the same readP12; the compiled build
// (dist/*.js, what the image runs) needs no hook and has no tsx.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
const { readP12 } = require(workerData.certificate);
parentPort.postMessage({ ready: true });
parentPort.on('message', (job) => {
  const p12 = Buffer.from(job.p12);
  try {
    parentPort.postMessage({ id: job.id, ok: true, credential: readP12(p12, job.password) });
  } catch (err) {
    parentPort.postMessage({ id: job.id, ok: false, code: err && err.code ? String(err.code) : null, message: String(err && err.message) });
  } finally {
    p12.fill(0);
  }
});
`;

class P12Thread {
  private worker: Worker | null = null;
  /** the worker has loaded readP12 (its start-up is not counted in a job's time limit) */
  private ready = false;
  private readonly queue: Job[] = [];
  private running: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;

  open(p12: Buffer, password: string, timeoutMs: number): Promise<SigningCredential> {
    if (this.queue.length >= P12_OPEN_QUEUE_MAX) {
      return Promise.reject(
        new ServiceError('cert.invalid', 'too many certificates are being opened at once; try again', {}),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, p12: Buffer.from(p12), password, timeoutMs, resolve, reject });
      this.pump();
    });
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        tsx: __filename.endsWith('.ts') ? require.resolve('tsx/cjs/api') : null,
        certificate: require.resolve('./certificate'),
      },
      resourceLimits: { maxOldGenerationSizeMb: 128 },
    });
    this.ready = false;
    worker.unref();
    worker.on('message', (reply: Reply) => {
      if (this.worker !== worker) return;
      if ('ready' in reply) {
        this.ready = true;
        this.pump();
      } else this.settle(reply);
    });
    const lost = (err: Error) => {
      if (this.worker !== worker) return; // one terminated after a time-out
      this.worker = null;
      this.fail(err);
    };
    worker.on('error', lost);
    worker.on('exit', () => lost(new Error('the certificate worker stopped')));
    return worker;
  }

  private pump(): void {
    if (this.running || this.queue.length === 0) return;
    this.worker ??= this.spawn();
    if (!this.ready) return; // pumped again once it is
    const job = this.queue.shift()!;
    const timer = setTimeout(() => {
      const w = this.worker;
      this.worker = null;
      this.finish()?.reject(
        new ServiceError(
          'cert.invalid',
          `the .p12 file took longer than ${job.timeoutMs} ms to open; it is refused`,
          {},
        ),
      );
      void w?.terminate();
      this.pump();
    }, job.timeoutMs);
    this.running = { job, timer };
    this.worker.postMessage({ id: job.id, p12: job.p12, password: job.password });
    job.p12.fill(0);
  }

  private finish(): Job | null {
    const r = this.running;
    if (!r) return null;
    clearTimeout(r.timer);
    this.running = null;
    return r.job;
  }

  private settle(reply: Reply): void {
    if (!this.running || this.running.job.id !== reply.id) return;
    const job = this.finish()!;
    if (reply.ok) job.resolve(reply.credential);
    else
      job.reject(
        reply.code === 'cert.invalid'
          ? new ServiceError('cert.invalid', reply.message, {})
          : new Error(`the certificate worker failed: ${reply.message}`),
      );
    this.pump();
  }

  private fail(err: Error): void {
    const job = this.finish();
    if (job) job.reject(err);
    else this.queue.splice(0).forEach((j) => j.reject(err)); // it never started
    this.pump();
  }
}

let shared: P12Thread | null = null;

/**
 * readP12 off the event loop, within `timeoutMs` (P12_OPEN_TIMEOUT_MS by default): the same
 * answer (a SigningCredential, or `cert.invalid` with its reason), or `cert.invalid` when the
 * file takes too long to open.
 */
export function readP12OffThread(
  p12: Buffer,
  password: string,
  opts: { timeoutMs?: number } = {},
): Promise<SigningCredential> {
  try {
    // the visible counts are refused here at once, with no derivation and no wait for the worker
    checkP12Iterations(p12, password, { inspectEncrypted: false });
  } catch (err) {
    return Promise.reject(err as Error);
  }
  shared ??= new P12Thread();
  return shared.open(p12, password, opts.timeoutMs ?? P12_OPEN_TIMEOUT_MS);
}
