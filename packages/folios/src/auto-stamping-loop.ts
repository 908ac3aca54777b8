import type { FoliosDeps } from './deps';
import { runAutoStamping } from './auto-stamping';

/** Runs the automatic stamping sweep every CAF_AUTO_INTERVAL_SEC (0: never) until stopped. */
export function startAutoStamping(deps: FoliosDeps): { stop(): void } {
  const every = deps.config.cafAutoIntervalSec;
  if (every <= 0) return { stop: () => undefined };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runAutoStamping(deps, (deps.clock ?? (() => new Date()))())
      .then((outcomes) => {
        const acted = outcomes.filter((o) => o.result !== 'skipped');
        if (acted.length) deps.logger.info({ outcomes: acted }, 'automatic stamping');
      })
      .catch((err) => deps.logger.error({ err }, 'automatic stamping sweep failed'))
      .finally(() => {
        running = false;
      });
  }, every * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
