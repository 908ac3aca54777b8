// @dte/sii-poller: the poller worker, for its main and for in-process tests.
export * from './poller';
export * from './verdicts';
export { Reconciler, type ReconcilerDeps } from './reconcile';
export { documentQuery, type DocRow, type DocQuery } from './documents';
export {
  loadConfig,
  backoffDelay,
  PACE_DEFAULTS,
  type Config,
  type PaceMode,
  type PollerSettings,
} from './config';
export { SiiPace } from './pace';
