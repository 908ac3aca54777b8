/**
 * `readReceivedEnvelope` (document by document) on a worker thread, so that a received file (up
 * to 10 MiB, up to 2000 DTEs, each with its signature, TED and CAF to verify: seconds of CPU)
 * never blocks the event loop of the api that every tenant shares. One serial worker per process
 * (the engine's `SerialWorker`: started on first use and kept, unref'd); files are verified one
 * at a time in arrival order (the machine's other core serves the requests meanwhile).
 *
 * Bounds (RECEPTION_THREAD_BOUNDS): a file verified for longer than `timeoutMs` terminates the
 * worker (a fresh one serves the next file) and is refused `verificacion_excedida`; more than
 * `queueMax` files waiting are refused `recepcion_ocupada` at once; the worker's heap is capped
 * (`heapMb`), and a file that exhausts it is refused like a time-out, nothing stored.
 */
import { SerialWorker } from '@dte/engine';

import {
  EnvelopeRefused,
  readReceivedEnvelope,
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

type EnvelopeData =
  | { ok: true; envelope: Omit<ReceivedEnvelope, 'results'> & { results: OutcomeData[] } }
  | { ok: false; refused: RefusalData };

function refusalData(err: ReceptionRefused): RefusalData {
  return {
    reason: err.reason,
    message: err.message,
    documento: err.documento,
    envelope: (err as Partial<EnvelopeRefused>).envelope,
  };
}

/**
 * Runs in the worker: readReceivedEnvelope, its refusals (of the file, of each document) as data;
 * any other error fails the job.
 */
export function verifyReceivedJob(job: { bytes: Uint8Array; opts: ReadReceivedOptions }): EnvelopeData {
  try {
    const envelope = readReceivedEnvelope(Buffer.from(job.bytes), job.opts);
    const results = envelope.results.map((r): OutcomeData =>
      r.ok ? r : { ...r, refusal: refusalData(r.refusal) },
    );
    return { ok: true, envelope: { ...envelope, results } };
  } catch (err) {
    if (err instanceof ReceptionRefused) return { ok: false, refused: refusalData(err) };
    throw err;
  }
}

function refusalOf(r: RefusalData): ReceptionRefused {
  if (r.envelope && (r.reason === 'firma_sobre_invalida' || r.reason === 'sobre_para_otra_empresa'))
    return new EnvelopeRefused(r.reason, r.message, r.envelope);
  return new ReceptionRefused(r.reason, r.message, r.documento);
}

const verificationWorker = new SerialWorker({
  handler: { module: __filename, fn: verifyReceivedJob },
  name: 'verification',
  heapMb: RECEPTION_THREAD_BOUNDS.heapMb,
  queueMax: RECEPTION_THREAD_BOUNDS.queueMax,
  busy: () =>
    new ReceptionUnavailable(
      'recepcion_ocupada',
      `${RECEPTION_THREAD_BOUNDS.queueMax} received files are already waiting to be verified; send it again shortly`,
    ),
  timedOut: (timeoutMs) =>
    new ReceptionUnavailable(
      'verificacion_excedida',
      `the file took longer than ${timeoutMs} ms to verify; nothing was stored`,
    ),
  lost: (err) =>
    new ReceptionUnavailable('verificacion_excedida', `the file could not be verified: ${err.message}`),
});

/**
 * The same answer as `readReceivedEnvelope` (each document's outcome, or the `ReceptionRefused` /
 * `EnvelopeRefused` that refuses the whole file), computed off the event loop;
 * `ReceptionUnavailable` when the worker is busy or too slow.
 */
export async function readReceivedEnvelopeOffThread(
  bytes: Buffer,
  opts: ReadReceivedOptions,
): Promise<ReceivedEnvelope> {
  const data = await verificationWorker.run(
    { bytes, opts },
    { timeoutMs: RECEPTION_THREAD_BOUNDS.timeoutMs },
  );
  if (!data.ok) throw refusalOf(data.refused);
  return {
    ...data.envelope,
    results: data.envelope.results.map((r): ReceivedOutcome =>
      r.ok
        ? { ...r, document: { ...r.document, xml: Buffer.from(r.document.xml) } }
        : { ...r, refusal: refusalOf(r.refusal) },
    ),
  };
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
