/**
 * Group commit for one kind of statement. While fewer than `parallel` flushes are in flight, an
 * urgent call (the default) starts one at the end of the current turn of the event loop
 * (setImmediate: the calls made in that turn, say the answers read in one poll, go together);
 * beyond that it waits, and the calls that wait go together in the next flush (at most `max` per
 * flush) as soon as one ends. The price is the wait for a flush in flight (at most one statement's
 * time); what it buys is one statement for the calls that arrive together instead of one each (and
 * no queueing for pool connections). A call that nobody waits for yet (`urgent: false`: a write in
 * the background, a read made ahead of its use) lingers up to `lingerMs` for company, unless an
 * urgent call or `hurry()` flushes it sooner. Each call resolves with its own result once its flush
 * is done, so a caller's next step always sees its write; a failed flush fails every call in it.
 */
export class Coalescer<I, O> {
  private waiting: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  /** a call among the waiting ones (or a hurry) wants the next flush at once */
  private urgent = false;
  /** a flush is scheduled for the end of this turn */
  private scheduled = false;
  private linger: NodeJS.Timeout | undefined;

  constructor(
    /** one statement for the items; returns their results in the same order */
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly parallel = 1,
    private readonly max = 200,
    /** the longest a call that is not urgent waits for others before its flush starts */
    private readonly lingerMs = 0,
  ) {}

  run(item: I, opts: { urgent?: boolean } = {}): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (opts.urgent !== false) this.urgent = true;
      this.kick();
    });
  }

  /** the calls waiting now go in the next flush without lingering (someone waits for one of them) */
  hurry(): void {
    if (this.waiting.length === 0) return;
    this.urgent = true;
    this.kick();
  }

  private kick(): void {
    if (this.inFlight >= this.parallel || this.waiting.length === 0 || this.scheduled) return;
    if (this.urgent || this.lingerMs <= 0) {
      this.scheduled = true;
      clearTimeout(this.linger);
      this.linger = undefined;
      setImmediate(() => {
        this.scheduled = false;
        void this.next();
      });
    } else if (!this.linger) {
      this.linger = setTimeout(() => {
        this.linger = undefined;
        this.urgent = true;
        this.kick();
      }, this.lingerMs);
    }
  }

  private async next(): Promise<void> {
    if (this.inFlight >= this.parallel || this.waiting.length === 0) return;
    this.inFlight++;
    const calls = this.waiting.splice(0, this.max);
    // what stays behind (beyond `max`) keeps its urgency; a full take starts lingering afresh
    if (this.waiting.length === 0) this.urgent = false;
    try {
      const out = await this.flush(calls.map((c) => c.item));
      calls.forEach((c, i) => c.resolve(out[i]!));
    } catch (err) {
      for (const c of calls) c.reject(err);
    } finally {
      this.inFlight--;
      this.kick();
    }
  }
}
