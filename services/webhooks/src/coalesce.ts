/**
 * Group commit for one kind of statement. A call made while a flush is in flight waits for it and
 * goes with the other waiting calls in the next flush (at most `max` per flush); an idle coalescer
 * flushes a lone call at once, so it adds no latency, and under load the calls that arrive
 * together share one statement. Each call resolves with its own result once its flush is done,
 * so a caller's next step always sees its write; a failed flush fails every call in it.
 */
export class Coalescer<I, O> {
  private waiting: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;

  constructor(
    /** one statement for the items; returns their results in the same order */
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly max = 200,
  ) {}

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
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
      this.busy = false;
    }
  }
}
