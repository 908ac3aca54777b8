/**
 * What a flush says of one item: written (`ok`), failed (`err`), or to be written `again` in the
 * next flush of its key (the flush made progress with others but not with this one).
 */
export type Outcome<O> = { ok: O } | { err: unknown } | { again: true };

interface Waiting<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Single flight per key, with the waiting items of that key written together: an item submitted
 * while no flush of its key runs is flushed at once (alone); items submitted while one runs wait
 * for it and then go in the next flush, at most `maxBatch` at a time, in submission order. No
 * timer: at a low rate every item is flushed alone and at once; under load the batches grow by
 * themselves. Keys are independent (their flushes run concurrently).
 */
export class WriteCoalescer<I, O> {
  private readonly queues = new Map<string, Waiting<I, O>[]>();

  constructor(
    private readonly flush: (items: I[]) => Promise<Outcome<O>[]>,
    private readonly maxBatch: number,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      // no flush of this key running: this item is flushed now
      this.queues.set(key, []);
      void this.run(key, [{ item, resolve, reject }]);
    });
  }

  /** Flushes `batch`, then the key's waiting items, until none is left. */
  private async run(key: string, batch: Waiting<I, O>[]): Promise<void> {
    for (;;) {
      let outcomes: Outcome<O>[];
      try {
        outcomes = await this.flush(batch.map((w) => w.item));
      } catch (err) {
        outcomes = batch.map(() => ({ err }));
      }
      const again: Waiting<I, O>[] = [];
      batch.forEach((w, i) => {
        const o = outcomes[i];
        if (!o) w.reject(new Error('the flush gave no outcome for this item'));
        else if ('ok' in o) w.resolve(o.ok);
        else if ('err' in o) w.reject(o.err);
        else again.push(w);
      });
      const queue = this.queues.get(key)!;
      // items to go again keep their place ahead of those that arrived meanwhile
      queue.unshift(...again);
      if (queue.length === 0) {
        this.queues.delete(key);
        return;
      }
      batch = queue.splice(0, this.maxBatch);
    }
  }
}
