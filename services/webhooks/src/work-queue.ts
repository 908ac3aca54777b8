/**
 * Runs jobs in parallel with a global limit and a limit per key (per endpoint), so that one
 * slow endpoint holds at most `perKey` slots and never delays the others. Jobs of a key beyond
 * its limit wait in that key's own line.
 */
export class KeyedWorkQueue {
  private running = 0;
  private readonly runningByKey = new Map<string, number>();
  private readonly waitingByKey = new Map<string, (() => Promise<void>)[]>();
  /** keys with waiting jobs, in arrival order (fairness across keys) */
  private readonly ready: string[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly global: number,
    private readonly perKey: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    if (global < 1 || perKey < 1) throw new Error('concurrency limits must be at least 1');
  }

  get size(): number {
    let waiting = 0;
    for (const list of this.waitingByKey.values()) waiting += list.length;
    return waiting + this.running;
  }

  push(key: string, job: () => Promise<void>): void {
    const list = this.waitingByKey.get(key);
    if (list) list.push(job);
    else {
      this.waitingByKey.set(key, [job]);
      this.ready.push(key);
    }
    this.pump();
  }

  /** resolves when nothing runs or waits */
  onIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    let scanned = 0;
    while (this.running < this.global && scanned < this.ready.length) {
      const key = this.ready.shift()!;
      const keyRunning = this.runningByKey.get(key) ?? 0;
      const list = this.waitingByKey.get(key);
      if (!list || list.length === 0) {
        this.waitingByKey.delete(key);
        continue;
      }
      if (keyRunning >= this.perKey) {
        this.ready.push(key);
        scanned++;
        continue;
      }
      scanned = 0;
      const job = list.shift()!;
      if (list.length > 0) this.ready.push(key);
      else this.waitingByKey.delete(key);
      this.start(key, job);
    }
  }

  private start(key: string, job: () => Promise<void>): void {
    this.running++;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
    void job()
      .catch((err) => this.onError(err))
      .finally(() => {
        this.running--;
        const n = (this.runningByKey.get(key) ?? 1) - 1;
        if (n === 0) this.runningByKey.delete(key);
        else this.runningByKey.set(key, n);
        if (this.waitingByKey.has(key) && !this.ready.includes(key)) this.ready.push(key);
        this.pump();
        if (this.size === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          for (const w of waiters) w();
        }
      });
  }
}
