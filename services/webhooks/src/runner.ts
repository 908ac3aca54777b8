import { metrics } from '@dte/service-runtime';

import type { Clock } from './clock';
import type { Dispatcher } from './dispatcher';
import type { DeliveryStore, DueAttempt } from './model';
import { KeyedWorkQueue } from './work-queue';

export interface RunnerOptions {
  /** attempts in flight at once */
  concurrency: number;
  /** attempts in flight at once for one endpoint (subscription) */
  perEndpoint: number;
  onError?: (err: unknown) => void;
}

/**
 * Where due attempts run: in parallel, at most `perEndpoint` per subscription, so a slow or
 * dead endpoint never holds up the others. Also runs the two housekeeping passes: picking up
 * overdue attempts whose message was lost (a crash between recording and scheduling), and
 * purging terminal records after the retention period.
 */
export class DeliveryRunner {
  readonly queue: KeyedWorkQueue;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly store: DeliveryStore,
    private readonly clock: Clock,
    opts: RunnerOptions,
  ) {
    this.queue = new KeyedWorkQueue(opts.concurrency, opts.perEndpoint, opts.onError);
  }

  /** hands a due attempt to the pool; returns at once */
  enqueue(due: DueAttempt): void {
    this.queue.push(due.subscription_id, async () => {
      metrics.webhookDeliveries.inc({ outcome: await this.dispatcher.runAttempt(due) });
    });
  }

  /**
   * Enqueues pending attempts that nobody runs: first attempts overdue by `firstGraceMs` (test
   * deliveries the api recorded, or a crash right after a status was ingested) and retries
   * overdue by `retryGraceMs` (their retry-topic message was lost). Returns how many.
   */
  async sweepOverdue(firstGraceMs: number, retryGraceMs: number, limit = 500): Promise<number> {
    const now = this.clock.now();
    const due = await this.store.findOverdue({
      firstBefore: new Date(now - firstGraceMs),
      retryBefore: new Date(now - retryGraceMs),
      now: new Date(now),
      limit,
    });
    for (const d of due) this.enqueue(d);
    return due.length;
  }

  /** removes terminal delivery records older than `retentionMs`; returns how many */
  purge(retentionMs: number): Promise<number> {
    return this.store.purgeTerminal(new Date(this.clock.now() - retentionMs));
  }

  idle(): Promise<void> {
    return this.queue.onIdle();
  }
}
