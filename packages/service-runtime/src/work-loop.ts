/**
 * Pieces of a worker's loop over work recorded in the database: the pause between passes that
 * new work (or stop) can cut short, and a pass that takes due rows in batches.
 */

/** The pause between two passes of a loop; `wake` ends the current pause at once. */
export class LoopPause {
  private wakeCurrent?: () => void;

  /** Waits `ms`, or less when `wake` is called meanwhile. */
  async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wakeCurrent = done;
    });
    this.wakeCurrent = undefined;
  }

  /** Ends the pause under way, if any (a call between pauses changes nothing). */
  wake(): void {
    this.wakeCurrent?.();
  }
}

/**
 * Takes due items (`take`, at most `batchSize` at once, e.g. FOR UPDATE SKIP LOCKED under a
 * lease) and works each batch concurrently, until a batch comes back short of `batchSize`.
 * A failing item goes to `onError` and does not stop the others (its lease makes it due again).
 * Returns how many items were taken.
 */
export async function workDueInBatches<T>(
  take: () => Promise<T[]>,
  batchSize: number,
  work: (item: T) => Promise<void>,
  onError: (err: unknown, item: T) => void,
): Promise<number> {
  let total = 0;
  for (;;) {
    const items = await take();
    if (items.length === 0) return total;
    total += items.length;
    await Promise.all(items.map((item) => work(item).catch((err) => onError(err, item))));
    if (items.length < batchSize) return total;
  }
}
