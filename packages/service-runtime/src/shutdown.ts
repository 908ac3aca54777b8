import type { Logger } from './logger';

/**
 * How long the drain may take (ms): SHUTDOWN_GRACE_MS, else 25 s, a little under Kubernetes'
 * default terminationGracePeriodSeconds (30 s; the Helm chart sets SHUTDOWN_GRACE_MS from it).
 */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SHUTDOWN_GRACE_MS;
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : 25_000;
}

/**
 * Runs the given closers once on SIGINT/SIGTERM, in order (each service lists them so that it
 * first stops taking work, e.g. its health server and consumers, then finishes what is in flight
 * and commits offsets, then closes its connections), then exits 0. A drain that has not finished
 * within `graceMs` (shutdownGraceMs()) is cut short: the process says so and exits 1 before the
 * orchestrator's SIGKILL would, so the log tells why the stop was not clean.
 */
export function onShutdown(
  logger: Logger,
  closers: (() => Promise<void>)[],
  graceMs = shutdownGraceMs(),
): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    logger.info({ signal, graceMs }, 'shutting down: draining');
    const deadline = setTimeout(() => {
      logger.error(
        { signal, graceMs },
        'shutdown: the drain did not finish within the grace period; exiting',
      );
      process.exit(1);
    }, graceMs);
    deadline.unref();
    void (async () => {
      for (const close of closers) {
        try {
          await close();
        } catch (err) {
          logger.error({ err }, 'error while shutting down');
        }
      }
      logger.info({ signal, ms: Date.now() - t0 }, 'shut down: drained');
      process.exit(0);
    })();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
