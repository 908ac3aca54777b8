import { metrics } from '@dte/service-runtime';

import type { Clock } from './clock';
import type { Dispatcher } from './dispatcher';
import type { DeliveryStore, DueAttempt } from './model';
import { FairWorkQueue, type PushResult } from './work-queue';

export interface RunnerOptions {
  /** attempts in flight at once */
  concurrency: number;
  /** attempts in flight at once for one endpoint (subscription) */
  perEndpoint: number;
  /** attempts in flight at once for one organization (WEBHOOKS_ORG_CONCURRENCY) */
  perOrganization?: number;
  /** attempts waiting in memory, all organizations (WEBHOOKS_QUEUE_MAX) */
  maxQueued?: number;
  /** attempts waiting in memory for one organization (WEBHOOKS_ORG_QUEUE_SHARE) */
  organizationShare?: number;
  /** how long the sweep's claim of a row it queued lasts (WEBHOOKS_SWEEP_HOLD) */
  sweepHoldMs?: number;
  /**
   * when an attempt starts, how many of its endpoint's next waiting attempts are claimed ahead
   * (default CLAIM_AHEAD_PER_SLOT × `perEndpoint`; 0: each attempt is claimed when it starts)
   */
  claimAhead?: number;
  onError?: (err: unknown) => void;
  /** true when the queue reached its high-water mark, false when it drained (pause/resume consumers) */
  onPressure?: (full: boolean) => void;
}

/**
 * Claims made ahead per endpoint slot: an endpoint's next 4 × WEBHOOKS_ENDPOINT_CONCURRENCY waiting
 * attempts are claimed ahead, so each waits for at most 4 of its endpoint's attempts in a row
 * (and a claim older than the dispatcher's claimAheadMaxAgeMs is claimed again before its POST).
 * Deeper means more claims per statement (bench/attempt-cpu.ts: 0.26 statements per delivery
 * with 1 per slot, 0.12 with 4, 0.11 with 8).
 */
export const CLAIM_AHEAD_PER_SLOT = 4;

/** organization key of attempts that do not say theirs (old retry messages) */
export const UNKNOWN_ORGANIZATION = '?';

/**
 * Where due attempts run: in parallel, at most `perEndpoint` per subscription, so a slow or
 * dead endpoint never holds up the others. Also runs the two housekeeping passes: picking up
 * overdue attempts whose message was lost (a crash between recording and scheduling), and
 * purging terminal records after the retention period.
 */
export class DeliveryRunner {
  readonly queue: FairWorkQueue;
  private readonly sweepHoldMs: number;
  /** attempts refused because their organization's share or the queue was full (left in the database) */
  refused = 0;
  /** outcomes of finished attempts still being written (delivered marks) */
  private readonly recording = new Set<Promise<void>>();
  private readonly onError: (err: unknown) => void;
  /** the attempts waiting in the queue, by delivery id (to claim an endpoint's next ones ahead) */
  private readonly waitingDue = new Map<string, DueAttempt>();
  /** how many of an endpoint's waiting attempts are claimed ahead when one starts */
  private readonly prefetch: number;
  /**
   * organizations with attempts refused (left pending in the database) and not yet taken back,
   * with the instant of the last refusal: the refill takes their rows due until then
   */
  private readonly backlog = new Map<string, number>();
  /** the refill running now (one at a time) */
  private refilling = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly store: DeliveryStore,
    private readonly clock: Clock,
    opts: RunnerOptions,
  ) {
    this.queue = new FairWorkQueue(
      {
        global: opts.concurrency,
        perKey: opts.perEndpoint,
        perOrg: opts.perOrganization ?? opts.concurrency,
        maxWaiting: opts.maxQueued ?? 10_000,
        orgShare: opts.organizationShare ?? opts.maxQueued ?? 10_000,
      },
      opts.onError,
      opts.onPressure,
    );
    this.sweepHoldMs = opts.sweepHoldMs ?? 120_000;
    this.onError = opts.onError ?? (() => undefined);
    this.prefetch = opts.claimAhead ?? opts.perEndpoint * CLAIM_AHEAD_PER_SLOT;
  }

  /**
   * Hands a due attempt to the pool; returns at once. An attempt already held (waiting or
   * running) is not queued twice; one refused because its organization's share (or the whole
   * queue) is full stays pending in the database, where the overdue sweep finds it again.
   */
  enqueue(due: DueAttempt): PushResult {
    const org = due.organization_id ?? UNKNOWN_ORGANIZATION;
    const r = this.queue.push(org, due.subscription_id, due.delivery_id, async () => {
      this.waitingDue.delete(due.delivery_id);
      // the claims of the endpoint's next attempts go out with this one (one statement): each
      // waits at most for one of the endpoint's attempts in flight to end (not when the global or
      // the organization's limit holds them: their wait is then not bounded by this endpoint)
      if (this.queue.onlyEndpointBound(org))
        for (const id of this.queue.nextWaiting(org, due.subscription_id, this.prefetch)) {
          const next = this.waitingDue.get(id);
          if (next) this.dispatcher.prefetch(next);
        }
      // the endpoint's slot is free once it answered; the delivered mark lands in the background
      // (sharing its statement with the claims of the attempts that take the freed slots)
      const { result, recorded } = await this.dispatcher.attempt(due);
      this.track(recorded.then(() => metrics.webhookDeliveries.inc({ outcome: result })));
      this.refillIfRoom(org);
    });
    if (r === 'queued') this.waitingDue.set(due.delivery_id, due);
    if (r === 'org_full' || r === 'full') {
      this.refused++;
      this.backlog.set(org, this.clock.now());
    }
    return r;
  }

  /** organizations whose refused attempts wait in the database for a refill */
  get backlogged(): string[] {
    return [...this.backlog.keys()];
  }

  /**
   * Takes an organization's refused attempts back from the database as soon as half its share of
   * the queue is free (checked each time one of its attempts ends), so that a backlog larger than
   * the share drains at its endpoints' pace instead of the overdue sweep's (at most `limit` rows
   * every WEBHOOKS_SWEEP_INTERVAL). It reads the organization's pending rows due until its last
   * refusal that nobody holds (not leased, not queued by a sweep, not waiting here), oldest first;
   * when fewer come back than there was room for, the backlog is drained. The overdue sweep stays
   * the safety net (a failed refill, another replica's refusals).
   */
  private refillIfRoom(org: string): void {
    const since = this.backlog.get(org);
    if (since === undefined || this.refilling) return;
    const { orgShare, maxWaiting } = this.queue.limits;
    const { waiting } = this.queue.orgLoad(org);
    const room = Math.min(orgShare - waiting, maxWaiting - this.queue.waitingCount);
    if (waiting > orgShare / 2 || room <= 0) return;
    this.refilling = true;
    this.refill(org, since, room).then(
      () => {
        this.refilling = false;
        for (const o of this.backlog.keys()) this.refillIfRoom(o);
      },
      (err) => {
        // not again at once (a database that is down would be asked in a loop): the next attempt
        // that ends, or the overdue sweep, tries again
        this.refilling = false;
        this.onError(err);
      },
    );
  }

  private async refill(org: string, since: number, room: number): Promise<void> {
    const now = this.clock.now();
    const due = await this.store.findOverdue({
      firstBefore: new Date(since),
      retryBefore: new Date(since),
      now: new Date(now),
      limit: room,
      queuedUntil: new Date(now + this.sweepHoldMs),
      organizationId: org,
      exclude: this.queue.waitingIds(org),
    });
    await this.takeFromDatabase(due);
    // every row refused until `since` came back, and nothing was refused since
    if (due.length < room && this.backlog.get(org) === since) this.backlog.delete(org);
  }

  /**
   * Enqueues pending attempts that nobody runs: first attempts overdue by `firstGraceMs` (test
   * deliveries the api recorded, or a crash right after a status was ingested) and retries
   * overdue by `retryGraceMs` (their retry-topic message was lost). Returns how many.
   */
  async sweepOverdue(firstGraceMs: number, retryGraceMs: number, limit = 500): Promise<number> {
    const room = this.queue.limits.maxWaiting - this.queue.waitingCount;
    if (room <= 0) return 0;
    const now = this.clock.now();
    const due = await this.store.findOverdue({
      firstBefore: new Date(now - firstGraceMs),
      retryBefore: new Date(now - retryGraceMs),
      now: new Date(now),
      limit: Math.min(limit, room),
      perOrganization: this.queue.limits.orgShare,
      queuedUntil: new Date(now + this.sweepHoldMs),
    });
    return this.takeFromDatabase(due);
  }

  /**
   * Queues attempts a sweep or a refill read from the database (and claimed there for
   * WEBHOOKS_SWEEP_HOLD); gives back the claims of those the queue refused. Returns how many it
   * queued.
   */
  private async takeFromDatabase(due: DueAttempt[]): Promise<number> {
    const giveBack: string[] = [];
    let queued = 0;
    for (const d of due) {
      const r = this.enqueue(d);
      if (r === 'queued') queued++;
      else if (r !== 'duplicate') giveBack.push(d.delivery_id);
    }
    if (giveBack.length > 0) await this.store.releaseQueued?.(giveBack);
    return queued;
  }

  /** removes terminal delivery records older than `retentionMs`; returns how many */
  purge(retentionMs: number): Promise<number> {
    return this.store.purgeTerminal(new Date(this.clock.now() - retentionMs));
  }

  /** resolves when no attempt runs or waits and every outcome is recorded */
  async idle(): Promise<void> {
    for (;;) {
      await this.queue.onIdle();
      if (this.recording.size === 0 && this.queue.size === 0) return;
      await Promise.all([...this.recording]);
    }
  }

  private track(recorded: Promise<void>): void {
    const p = recorded.catch((err) => this.onError(err)).finally(() => this.recording.delete(p));
    this.recording.add(p);
  }
}
