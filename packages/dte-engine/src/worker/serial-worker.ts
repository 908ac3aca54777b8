/**
 * A serial worker thread: CPU-bound work a server must not run on its event loop (opening a
 * .p12, verifying a received file) runs on one worker thread, one job at a time in arrival
 * order, each within a hard time limit.
 *
 * - The worker starts on first use and is kept; it holds the process open while it has jobs in
 *   hand, never when idle. Its start-up (loading the handler's module) is not counted in a job's
 *   time limit.
 * - More than `queueMax` jobs waiting: the next is refused at once (`busy`).
 * - A job that outlives its limit terminates the worker and is refused (`timedOut`); a fresh
 *   worker serves the next job. A worker that dies under a job (heap exhausted, a crash) fails
 *   that job (`lost`) and is replaced; one that dies before any job ran fails every waiting job.
 * - The handler runs in the worker with its input and output passed by structured clone (no
 *   class survives: it returns plain data, a refusal included, and the caller rebuilds the
 *   errors); a throw fails the job with "the <name> worker failed: <message>".
 *
 * From the TypeScript sources (tsx, mocha) the worker registers tsx's require hook before loading
 * the handler's module (the main thread's hook does not reach a worker); the compiled build
 * (.js, what the image runs) needs no hook and has no tsx.
 */
import { Worker } from 'node:worker_threads';

export interface SerialWorkerOptions<In, Out> {
  /**
   * Where the job runs: the absolute path of a module (the caller's own `__filename`, or a
   * `require.resolve`) and the function it exports, called in the worker with each job's input.
   * It is found there by its name, which is the name it is exported under.
   */
  handler: { module: string; fn: (input: In) => Out };
  /** what the worker does, in its own errors ("the certificate worker stopped") */
  name: string;
  /** the worker's old-generation heap (MiB); a job that exhausts it is `lost` */
  heapMb: number;
  /** jobs waiting for the worker at most (the running one excluded) */
  queueMax: number;
  /** the error of a job refused because `queueMax` jobs are already waiting */
  busy: () => Error;
  /** the error of a job that ran longer than its limit */
  timedOut: (timeoutMs: number) => Error;
  /** the error of the running job when the worker died under it; default, the worker's own */
  lost?: (err: Error) => Error;
}

export interface SerialJobOptions {
  /** hard limit on this job's run, its wait in the queue excluded (ms) */
  timeoutMs: number;
  /** ArrayBuffers of the input moved to the worker rather than copied (gone from this thread) */
  transfer?: ArrayBuffer[];
}

interface Job<In, Out> {
  id: number;
  input: In;
  opts: SerialJobOptions;
  resolve: (output: Out) => void;
  reject: (err: Error) => void;
}

type Reply<Out> =
  | { ready: true; id?: undefined }
  | { id: number; ok: true; output: Out }
  | { id: number; ok: false; message: string };

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
const handler = require(workerData.module)[workerData.fn];
if (typeof handler !== 'function')
  throw new Error(workerData.module + ' exports no function ' + workerData.fn);
parentPort.postMessage({ ready: true });
parentPort.on('message', (job) => {
  let reply;
  try {
    reply = { id: job.id, ok: true, output: handler(job.input) };
  } catch (err) {
    reply = { id: job.id, ok: false, message: String(err && err.message) };
  }
  try {
    parentPort.postMessage(reply);
  } catch (err) {
    parentPort.postMessage({ id: job.id, ok: false, message: String(err && err.message) });
  }
});
`;

export class SerialWorker<In, Out> {
  private worker: Worker | null = null;
  /** the worker has loaded the handler */
  private ready = false;
  private readonly queue: Job<In, Out>[] = [];
  private running: { job: Job<In, Out>; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;

  constructor(private readonly opts: SerialWorkerOptions<In, Out>) {}

  /** The handler's output for `input`, computed on the worker; refused as the options say. */
  run(input: In, jobOpts: SerialJobOptions): Promise<Out> {
    if (this.queue.length >= this.opts.queueMax) return Promise.reject(this.opts.busy());
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, input, opts: jobOpts, resolve, reject });
      this.pump();
    });
  }

  private spawn(): Worker {
    const { module, fn } = this.opts.handler;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        tsx: module.endsWith('.ts') ? require.resolve('tsx/cjs/api') : null,
        module,
        fn: fn.name,
      },
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb },
    });
    this.ready = false;
    worker.on('message', (reply: Reply<Out>) => {
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
      if (job) job.reject(this.opts.lost ? this.opts.lost(err) : err);
      else this.queue.splice(0).forEach((j) => j.reject(err)); // it never started
      this.pump();
    };
    worker.on('error', lost);
    worker.on('exit', () => lost(new Error(`the ${this.opts.name} worker stopped`)));
    return worker;
  }

  /** Runs the next job when it can, and holds the process open exactly while jobs are in hand. */
  private pump(): void {
    this.dispatch();
    // an idle worker keeps no process alive; one with work does (without this, a script whose only
    // work is a job could exit before its answer). unref() also undoes the ref that adding a
    // 'message' listener takes.
    if (this.running || this.queue.length > 0) this.worker?.ref();
    else this.worker?.unref();
  }

  private dispatch(): void {
    if (this.running || this.queue.length === 0) return;
    this.worker ??= this.spawn();
    if (!this.ready) return; // pumped again once it is
    const job = this.queue.shift()!;
    const timer = setTimeout(() => {
      const w = this.worker;
      this.worker = null;
      this.finish()?.reject(this.opts.timedOut(job.opts.timeoutMs));
      void w?.terminate();
      this.pump();
    }, job.opts.timeoutMs);
    this.running = { job, timer };
    try {
      this.worker.postMessage({ id: job.id, input: job.input }, job.opts.transfer ?? []);
    } catch (err) {
      // an input that cannot cross to the worker (not cloneable): this job fails, the next runs
      this.finish()?.reject(err as Error);
      this.pump();
    }
  }

  private finish(): Job<In, Out> | null {
    const r = this.running;
    if (!r) return null;
    clearTimeout(r.timer);
    this.running = null;
    return r.job;
  }

  private settle(reply: Exclude<Reply<Out>, { ready: true }>): void {
    if (!this.running || this.running.job.id !== reply.id) return;
    const job = this.finish()!;
    if (reply.ok) job.resolve(reply.output);
    else job.reject(new Error(`the ${this.opts.name} worker failed: ${reply.message}`));
    this.pump();
  }
}
