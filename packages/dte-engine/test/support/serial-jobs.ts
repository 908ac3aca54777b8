/**
 * The job of test/serial-worker.test.ts, run on the worker thread. A spin returns when it ran (the
 * worker's clock) so the test sees the order and overlap of runs.
 */
export type TestJob =
  { spin: string; ms: number } | { throws: string } | { hog: true } | { bytes: Uint8Array };

export type TestJobResult = { label: string; start: number; end: number } | { byteLength: number };

export function testJob(job: TestJob): TestJobResult {
  if ('spin' in job) {
    // keeps the worker's CPU busy (a stand-in for a slow .p12 or a large received file)
    const start = Date.now();
    while (Date.now() - start < job.ms) {
      // the worker answers nothing else meanwhile
    }
    return { label: job.spin, start, end: Date.now() };
  }
  if ('throws' in job) throw new Error(job.throws);
  if ('hog' in job) {
    // allocates until the worker's capped heap is exhausted
    const kept: number[][] = [];
    for (;;) kept.push(Array.from({ length: 100_000 }, (_, i) => i));
  }
  return { byteLength: job.bytes.byteLength };
}
