/**
 * `readReceivedEnvelope` (document by document) on a worker thread, so that a received file (up to 10 MiB, up to 2000 DTEs,
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

import {
  EnvelopeRefused,
  type ReadReceivedOptions,
  type ReceivedDocument,
  type ReceivedEnvelope,
  type ReceivedOutcome,
} from './intercambio';
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
  resolve: (e: ReceivedEnvelope) => void;
  reject: (e: Error) => void;
}

/** A refusal as it crosses the thread boundary (structured clone keeps no class). */
interface RefusalData {
  reason: RefusalReason;
  message: string;
  documento?: ReceptionRefused['documento'];
  envelope?: EnvelopeRefused['envelope'];
}

type OutcomeData =
  | {
      ok: true;
      index: number;
      ref: ReceivedOutcome['ref'];
      document: Omit<ReceivedDocument, 'xml'> & { xml: Uint8Array };
    }
  | { ok: false; index: number; ref: ReceivedOutcome['ref']; refusal: RefusalData };

type Reply =
  | { ready: true; id?: undefined }
  | { id: number; ok: true; envelope: Omit<ReceivedEnvelope, 'results'> & { results: OutcomeData[] } }
  | { id: number; ok: false; refused: RefusalData | null; message: string };

// From the TypeScript sources the worker registers tsx's require hook first (as the engine's .p12
// worker); the compiled build needs none. Then the same readReceivedEnvelope, its refusals as data.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
const { readReceivedEnvelope } = require(workerData.intercambio);
const { ReceptionRefused } = require(workerData.safeXml);
const refusalData = (err) => ({ reason: err.reason, message: err.message, documento: err.documento, envelope: err.envelope });
parentPort.postMessage({ ready: true });
parentPort.on('message', (job) => {
  try {
    const envelope = readReceivedEnvelope(Buffer.from(job.bytes), job.opts);
    const results = envelope.results.map((r) => (r.ok ? r : { ...r, refusal: refusalData(r.refusal) }));
    parentPort.postMessage({ id: job.id, ok: true, envelope: { ...envelope, results } });
  } catch (err) {
    const refused = err instanceof ReceptionRefused ? refusalData(err) : null;
    parentPort.postMessage({ id: job.id, ok: false, refused, message: String(err && err.message) });
  }
});
`;

function refusalOf(r: RefusalData): ReceptionRefused {
  if (r.envelope && (r.reason === 'firma_sobre_invalida' || r.reason === 'sobre_para_otra_empresa'))
    return new EnvelopeRefused(r.reason, r.message, r.envelope);
  return new ReceptionRefused(r.reason, r.message, r.documento);
}

class IntercambioThread {
  private worker: Worker | null = null;
  private ready = false;
  private readonly queue: Job[] = [];
  private running: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;

  constructor(private readonly bounds: typeof RECEPTION_THREAD_BOUNDS) {}

  read(bytes: Buffer, opts: ReadReceivedOptions): Promise<ReceivedEnvelope> {
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
        tsx: __filename.endsWith('.ts') ? require.resolve('tsx/cjs/api') : null,
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
    if (reply.ok)
      job.resolve({
        ...reply.envelope,
        results: reply.envelope.results.map((r): ReceivedOutcome =>
          r.ok
            ? { ...r, document: { ...r.document, xml: Buffer.from(r.document.xml) } }
            : { ...r, refusal: refusalOf(r.refusal) },
        ),
      });
    else if (reply.refused) job.reject(refusalOf(reply.refused));
    else job.reject(new Error(`the verification worker failed: ${reply.message}`));
    this.pump();
  }
}

let shared: IntercambioThread | null = null;

/**
 * The same answer as `readReceivedEnvelope` (each document's outcome, or the `ReceptionRefused` /
 * `EnvelopeRefused` that refuses the whole file), computed off the event loop;
 * `ReceptionUnavailable` when the worker is busy or too slow.
 */
export function readReceivedEnvelopeOffThread(
  bytes: Buffer,
  opts: ReadReceivedOptions,
): Promise<ReceivedEnvelope> {
  shared ??= new IntercambioThread(RECEPTION_THREAD_BOUNDS);
  return shared.read(bytes, opts);
}

/** `readReceivedXml` off the event loop: the whole file, or the first refused DTE's refusal. */
export async function readReceivedXmlOffThread(
  bytes: Buffer,
  opts: ReadReceivedOptions,
): Promise<ReceivedDocument[]> {
  const envelope = await readReceivedEnvelopeOffThread(bytes, opts);
  return envelope.results.map((r) => {
    if (!r.ok) throw r.refusal;
    return r.document;
  });
}
