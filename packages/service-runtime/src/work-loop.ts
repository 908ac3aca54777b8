/**
 * Pieces of a worker's loop over work recorded in the database: the pause between passes that
 * new work (or stop) can cut short.
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
