/**
 * Runs a bench script's main and exits with its outcome: 0 when it resolved, 1 with the error
 * printed when it threw. The exit is explicit, since a handle of a stack the script started
 * (a pool, a consumer, an in-process api) can outlive its close() and keep the loop alive.
 */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
