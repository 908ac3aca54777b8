import { metrics } from '@dte/service-runtime';
import { classify, stageOf } from '@dte/status';

/** Names of @dte/status stages, as dte_stage_duration_seconds labels them. */
const STAGE_NAMES = ['queued', 'signed', 'sending', 'at_sii', 'verdict'] as const;

/**
 * Records a transition the projector applied: the time between the two observations in
 * dte_stage_duration_seconds{from,to} when the document moved to a later stage, and
 * dte_verdicts_total{categoria} when it reached a terminal status.
 */
export function observeTransition(
  from: { sii_status: string; observed_at: Date | string },
  to: { sii_status: string; observed_at: Date },
): void {
  const a = stageOf(from.sii_status);
  const b = stageOf(to.sii_status);
  if (b > a && STAGE_NAMES[a] && STAGE_NAMES[b]) {
    const seconds = (to.observed_at.getTime() - new Date(from.observed_at).getTime()) / 1000;
    if (seconds >= 0) metrics.stageDuration.observe({ from: STAGE_NAMES[a], to: STAGE_NAMES[b] }, seconds);
  }
  const verdict = classify(to.sii_status);
  if (verdict.terminal && !classify(from.sii_status).terminal)
    metrics.verdicts.inc({ categoria: verdict.categoria });
}
