/** In-flight and in-memory limits of the delivery queue (README: Tenant isolation bounds). */
export interface FairQueueLimits {
  /** jobs running at once, all organizations together */
  global: number;
  /** jobs running at once for one organization */
  perOrg: number;
  /** jobs running at once for one endpoint (subscription) */
  perKey: number;
  /** jobs waiting in memory, all organizations together: a push beyond it is refused */
  maxWaiting: number;
  /** jobs waiting in memory for one organization (its share): a push beyond it is refused */
  orgShare: number;
}

/**
 * What became of a pushed job: `queued`; `duplicate` (a job with that id is already waiting or
 * running); `org_full` / `full` (the organization's share or the whole queue is full: the caller
 * leaves the work where it is durable, the database, for a later sweep).
 */
export type PushResult = 'queued' | 'duplicate' | 'org_full' | 'full';

type Job = { id: string; run: () => Promise<void> };

interface EndpointLine {
  running: number;
  jobs: Job[];
}

interface OrgLine {
  running: number;
  waiting: number;
  endpoints: Map<string, EndpointLine>;
  /** endpoints with waiting jobs, in turn order */
  turn: string[];
}

/**
 * The delivery work queue. Jobs are grouped by organization, then by endpoint; slots go to the
 * organizations in turn (round robin), and within one to its endpoints in turn, under three
 * concurrency limits (global, per organization, per endpoint). So an organization with thousands
 * of pending deliveries to slow endpoints holds at most `perOrg` slots and `orgShare` places in
 * memory, and another organization's delivery starts as soon as any slot frees, whatever is
 * queued before it. A job id is held once (waiting or running): pushing it again is a no-op.
 *
 * Back-pressure: `onPressure(true)` when the waiting jobs reach the high-water mark (3/4 of
 * maxWaiting), `onPressure(false)` when they drained to the low-water mark (1/4); the service
 * pauses and resumes its Kafka consumers on it.
 */
export class FairWorkQueue {
  private running = 0;
  private waiting = 0;
  private readonly held = new Set<string>();
  private readonly orgs = new Map<string, OrgLine>();
  /** organizations with waiting jobs, in turn order */
  private readonly turn: string[] = [];
  private readonly inTurn = new Set<string>();
  private idleWaiters: (() => void)[] = [];
  private pressured = false;
  /** the most jobs ever waiting at once (for tests and figures) */
  peakWaiting = 0;
  readonly highWater: number;
  readonly lowWater: number;

  constructor(
    readonly limits: FairQueueLimits,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly onPressure: (full: boolean) => void = () => undefined,
  ) {
    for (const [k, v] of Object.entries(limits))
      if (!Number.isInteger(v) || v < 1) throw new Error(`queue limit ${k} must be a positive integer`);
    this.highWater = Math.max(1, Math.ceil((limits.maxWaiting * 3) / 4));
    this.lowWater = Math.floor(limits.maxWaiting / 4);
  }

  /** jobs waiting or running */
  get size(): number {
    return this.waiting + this.running;
  }

  get waitingCount(): number {
    return this.waiting;
  }

  /** whether the high-water mark was reached and the low-water mark not yet */
  get underPressure(): boolean {
    return this.pressured;
  }

  has(id: string): boolean {
    return this.held.has(id);
  }

  /** ids of the next `n` jobs waiting for one endpoint, in the order they will start */
  nextWaiting(org: string, key: string, n: number): string[] {
    const jobs = this.orgs.get(org)?.endpoints.get(key)?.jobs ?? [];
    return jobs.slice(0, n).map((j) => j.id);
  }

  /**
   * whether the organization's next job waits only for its endpoint's slot: neither the global
   * nor the organization's limit is reached
   */
  onlyEndpointBound(org: string): boolean {
    return this.running < this.limits.global && (this.orgs.get(org)?.running ?? 0) < this.limits.perOrg;
  }

  /** ids of the organization's jobs waiting in memory (not those running) */
  waitingIds(org: string): string[] {
    const ids: string[] = [];
    for (const e of this.orgs.get(org)?.endpoints.values() ?? []) for (const j of e.jobs) ids.push(j.id);
    return ids;
  }

  /** waiting and running jobs of one organization */
  orgLoad(org: string): { running: number; waiting: number } {
    const o = this.orgs.get(org);
    return { running: o?.running ?? 0, waiting: o?.waiting ?? 0 };
  }

  push(org: string, key: string, id: string, run: () => Promise<void>): PushResult {
    if (this.held.has(id)) return 'duplicate';
    let o = this.orgs.get(org);
    if (this.waiting >= this.limits.maxWaiting) return 'full';
    if ((o?.waiting ?? 0) >= this.limits.orgShare) return 'org_full';
    if (!o) {
      o = { running: 0, waiting: 0, endpoints: new Map(), turn: [] };
      this.orgs.set(org, o);
    }
    let e = o.endpoints.get(key);
    if (!e) {
      e = { running: 0, jobs: [] };
      o.endpoints.set(key, e);
    }
    if (e.jobs.length === 0) o.turn.push(key);
    e.jobs.push({ id, run });
    o.waiting++;
    this.waiting++;
    this.held.add(id);
    if (this.waiting > this.peakWaiting) this.peakWaiting = this.waiting;
    this.enterTurn(org);
    if (!this.pressured && this.waiting >= this.highWater) {
      this.pressured = true;
      this.onPressure(true);
    }
    this.pump();
    return 'queued';
  }

  /** resolves when nothing runs or waits */
  onIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private enterTurn(org: string): void {
    if (this.inTurn.has(org)) return;
    this.inTurn.add(org);
    this.turn.push(org);
  }

  private pump(): void {
    let scanned = 0;
    while (this.running < this.limits.global && scanned < this.turn.length) {
      const org = this.turn.shift()!;
      this.inTurn.delete(org);
      const o = this.orgs.get(org)!;
      const job = o.running < this.limits.perOrg ? this.takeFrom(o) : null;
      if (o.waiting > 0) this.enterTurn(org);
      if (!job) {
        scanned++;
        continue;
      }
      scanned = 0;
      this.start(org, job.key, job.job);
    }
    if (this.pressured && this.waiting <= this.lowWater) {
      this.pressured = false;
      this.onPressure(false);
    }
  }

  /** the next job of the organization's next endpoint that has a free slot, or null */
  private takeFrom(o: OrgLine): { key: string; job: Job } | null {
    for (let i = 0; i < o.turn.length; i++) {
      const key = o.turn.shift()!;
      const e = o.endpoints.get(key)!;
      if (e.running >= this.limits.perKey) {
        o.turn.push(key);
        continue;
      }
      const job = e.jobs.shift()!;
      if (e.jobs.length > 0) o.turn.push(key);
      o.waiting--;
      this.waiting--;
      return { key, job };
    }
    return null;
  }

  private start(org: string, key: string, job: Job): void {
    const o = this.orgs.get(org)!;
    const e = o.endpoints.get(key)!;
    this.running++;
    o.running++;
    e.running++;
    void Promise.resolve()
      .then(job.run)
      .catch((err) => this.onError(err))
      .finally(() => {
        this.running--;
        o.running--;
        e.running--;
        this.held.delete(job.id);
        if (e.running === 0 && e.jobs.length === 0) o.endpoints.delete(key);
        if (o.running === 0 && o.waiting === 0) this.orgs.delete(org);
        this.pump();
        if (this.size === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          for (const w of waiters) w();
        }
      });
  }
}
