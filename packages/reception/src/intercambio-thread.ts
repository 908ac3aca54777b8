/**
 * `readReceivedXml` on a worker thread, so that a received file (up to 10 MiB, up to 2000 DTEs,
 * each with its signature, TED and CAF to verify: seconds of CPU) never blocks the event loop of
 * the api that every tenant shares. One worker per process, started on first use and kept
 * (unref'd); files are verified one at a time in arrival order (the machine's other core serves
 * the requests meanwhile).
 *
 * Bounds (RECEPTION_THREAD_BOUNDS): a file verified for longer than `timeoutMs` terminates the
 * worker (a fresh one serves the next file) and is refused `verificacion_excedida`; more than
 * `queueMax` files waiting are refused `recepcion_ocupada` at once; the worker's heap is capped
 * (`heapMb`), and a file that exhausts it is refused like a time-out, nothing stored.
 */
import { Worker } from 'node:worker_threads';

import type { ReadReceivedOptions, ReceivedDocument } from './intercambio';
import { ReceptionRefused, type RefusalReason } from './safe-xml';

export const RECEPTION_THREAD_BOUNDS = {
  /** hard limit on one file's verification, queueing excluded (ms) */
  timeoutMs: 60_000,
  /** files waiting for the worker at most; one more is refused at once */
  queueMax: 8,
  /** the worker's old-generation heap (MiB): a 10 MiB EnvioDTE of 2000 DTEs needs about 200 */
  heapMb: 384,
} as const;

/** The file could not be verified now (busy, too slow): nothing was stored; send it again. */
export class ReceptionUnavailable extends Error {
  constructor(
    readonly reason: 'recepcion_ocupada' | 'verificacion_excedida',
    message: string,
  ) {
    super(message);
    this.name = 'ReceptionUnavailable';
  }
}

interface Job {
  id: number;
  bytes: Buffer;
  opts: ReadReceivedOptions;
  resolve: (d: ReceivedDocument[]) => void;
  reject: (e: Error) => void;
}

type Reply =
  | { ready: true; id?: undefined }
  | { id: number; ok: true; docs: (Omit<ReceivedDocument, 'xml'> & { xml: Uint8Array })[] }
  | {
      id: number;
      ok: false;
      refused: { reason: RefusalReason; documento?: ReceptionRefused['documento'] } | null;
      message: string;
    };

// TypeScript through tsx's require hook (as the engine's .p12 worker), then the same readReceivedXml.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.tsx).register();
const { readReceivedXml } = require(workerData.intercambio);
const { ReceptionRefused } = require(workerData.safeXml);
parentPort.postMessage({ ready: true });
parentPort.on('message', (job) => {
  try {
    const docs = readReceivedXml(Buffer.from(job.bytes), job.opts);
    parentPort.postMessage({ id: job.id, ok: true, docs });
  } catch (err) {
    const refused = err instanceof ReceptionRefused ? { reason: err.reason, documento: err.documento } : null;
    parentPort.postMessage({ id: job.id, ok: false, refused, message: String(err && err.message) });
  }
});
`;

class IntercambioThread {
  private worker: Worker | null = null;
  private ready = false;
  private readonly queue: Job[] = [];
  private running: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;

  constructor(private readonly bounds: typeof RECEPTION_THREAD_BOUNDS) {}

  read(bytes: Buffer, opts: ReadReceivedOptions): Promise<ReceivedDocument[]> {
    if (this.queue.length >= this.bounds.queueMax) {
      return Promise.reject(
        new ReceptionUnavailable(
          'recepcion_ocupada',
          `${this.bounds.queueMax} received files are already waiting to be verified; send it again shortly`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, bytes, opts, resolve, reject });
      this.pump();
    });
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        tsx: require.resolve('tsx/cjs/api'),
        intercambio: require.resolve('./intercambio'),
        safeXml: require.resolve('./safe-xml'),
      },
      resourceLimits: { maxOldGenerationSizeMb: this.bounds.heapMb },
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
      const job = this.finish();
      if (job)
        job.reject(
          new ReceptionUnavailable('verificacion_excedida', `the file could not be verified: ${err.message}`),
        );
      else this.queue.splice(0).forEach((j) => j.reject(err)); // it never started
      this.pump();
    };
    worker.on('error', lost);
    worker.on('exit', () => lost(new Error('the verification worker stopped')));
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
        new ReceptionUnavailable(
          'verificacion_excedida',
          `the file took longer than ${this.bounds.timeoutMs} ms to verify; nothing was stored`,
        ),
      );
      void w?.terminate();
      this.pump();
    }, this.bounds.timeoutMs);
    this.running = { job, timer };
    this.worker.postMessage({ id: job.id, bytes: job.bytes, opts: job.opts });
  }

  private finish(): Job | null {
    const r = this.running;
    if (!r) return null;
    clearTimeout(r.timer);
    this.running = null;
    return r.job;
  }

  private settle(reply: Exclude<Reply, { ready: true }>): void {
    if (!this.running || this.running.job.id !== reply.id) return;
    const job = this.finish()!;
    if (reply.ok) job.resolve(reply.docs.map((d) => ({ ...d, xml: Buffer.from(d.xml) })));
    else if (reply.refused)
      job.reject(new ReceptionRefused(reply.refused.reason, reply.message, reply.refused.documento));
    else job.reject(new Error(`the verification worker failed: ${reply.message}`));
    this.pump();
  }
}

let shared: IntercambioThread | null = null;

/**
 * The same answer as `readReceivedXml` (the documents, or `ReceptionRefused` with its reason),
 * computed off the event loop; `ReceptionUnavailable` when the worker is busy or too slow.
 */
export function readReceivedXmlOffThread(
  bytes: Buffer,
  opts: ReadReceivedOptions,
): Promise<ReceivedDocument[]> {
  shared ??= new IntercambioThread(RECEPTION_THREAD_BOUNDS);
  return shared.read(bytes, opts);
}
