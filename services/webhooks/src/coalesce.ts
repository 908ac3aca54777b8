/**
 * Group commit for one kind of statement, no timer. While fewer than `parallel` flushes are in
 * flight a call starts one at the end of the current turn of the event loop (setImmediate: the
 * calls made in that turn, say the answers read in one poll, go together); beyond that it waits,
 * and the calls that wait go together in the next flush (at most `max` per flush) as soon as one
 * ends. The price is the wait for a flush in flight (at most one statement's time); what it buys
 * is one statement for the calls that arrive together instead of one each (and no queueing for
 * pool connections). Each call resolves with its own result once its flush is done, so a
 * caller's next step always sees its write; a failed flush fails every call in it.
 */
export class Coalescer<I, O> {
  private waiting: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    /** one statement for the items; returns their results in the same order */
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly parallel = 1,
    private readonly max = 200,
  ) {}

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.inFlight < this.parallel) {
        this.inFlight++;
        setImmediate(() => void this.next());
      }
    });
  }

  private async next(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const calls = this.waiting.splice(0, this.max);
        try {
          const out = await this.flush(calls.map((c) => c.item));
          calls.forEach((c, i) => c.resolve(out[i]!));
        } catch (err) {
          for (const c of calls) c.reject(err);
        }
      }
    } finally {
      this.inFlight--;
    }
  }
}
