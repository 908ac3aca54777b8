import type { Logger } from './logger';

/** Runs the given closers once on SIGINT/SIGTERM, then exits. */
export function onShutdown(logger: Logger, closers: (() => Promise<void>)[]): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void (async () => {
      for (const close of closers) {
        try {
          await close();
        } catch (err) {
          logger.error({ err }, 'error while shutting down');
        }
      }
      process.exit(0);
    })();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
