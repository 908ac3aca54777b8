/**
 * Polls `fn` every 100 ms until it answers something truthy, and answers that; after `ms` the test
 * fails naming `what`. An error thrown by `fn` fails the test at once.
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
