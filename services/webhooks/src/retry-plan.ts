/**
 * When attempts run: the first at once, then one delay per tier after each failure (spec:
 * 0, 1 min, 30 min, 2 h, 12 h, so five attempts). Each tier is one retry topic.
 */
export interface RetryPlan {
  /** delay before attempt 2, 3, ...; its length + 1 is the number of attempts */
  delaysMs: number[];
}

export const SPEC_RETRY_DELAYS_MS = [60_000, 30 * 60_000, 2 * 3_600_000, 12 * 3_600_000];

export function maxAttempts(plan: RetryPlan): number {
  return plan.delaysMs.length + 1;
}

/** Tier (0-based index of delaysMs) that carries attempt `attempt` (>= 2). */
export function tierOfAttempt(attempt: number): number {
  return attempt - 2;
}

export function delayBeforeAttempt(plan: RetryPlan, attempt: number): number {
  if (attempt <= 1) return 0;
  const d = plan.delaysMs[tierOfAttempt(attempt)];
  if (d === undefined)
    throw new Error(`attempt ${attempt} is beyond the plan of ${maxAttempts(plan)} attempts`);
  return d;
}
