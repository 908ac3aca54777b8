/**
 * When to ask the SII again about an envelope: the poll schedule follows the SII's own pace.
 *
 * Every QueryEstUp that finds an envelope still in process costs a poll, and every intermediate
 * code it finds (-11, SOK, FOK, PRD…) is a status change written and published for each of the
 * envelope's documents. A fixed schedule (first poll after POLL_FIRST_DELAY_MS, then a geometric
 * backoff) pays that for every intermediate state the SII happens to be in at those instants, so
 * the cost per document grew with the SII's latency. The adaptive pace instead aims each poll at
 * the instant the SII has lately been giving its verdicts:
 *
 * - `expected` (per channel and SII environment, in this process): the envelope age at which the
 *   SII answers its verdict. A verdict found by the first poll lowers it by `paceShrink` (the SII
 *   may have been quicker: probe earlier next time); a verdict found only after polls that saw
 *   the envelope still in process raises it to that age.
 * - the first poll is due at max(POLL_FIRST_DELAY_MS, expected), at most POLL_BACKOFF_MAX_MS;
 * - a verdict found after polls that saw the envelope in process came between the last of those
 *   (age `l`) and this one (age `a`): an expectation already inside (l, a] stays. The envelopes
 *   that searched side by side before anything was learned (the first ones after a start, steps
 *   of ×1.5) each find their verdict a little later than the first one did (tick delays), and each
 *   used to raise the expectation to its own age: at the slow SII (90 s) the warm-up's siblings
 *   raised it to ~135 s and every next envelope was first polled there. Otherwise (nothing
 *   learned, or an expectation at or below `l`: the SII slowed down) it becomes `a`. (The middle
 *   or upper quarter of (l, a] was tried: a guess below the SII's time costs the next envelopes a
 *   second poll and an intermediate status per document, and test/pipeline/poll-pace.test.ts
 *   bounds those.)
 * - after a poll without a verdict at envelope age `a`: when `a` < expected, at the expected
 *   instant; past it, after a × `paceAgeFactor` (0.5) (the longer the SII has taken, the longer the next
 *   wait; polls per envelope grow with the logarithm of the SII's latency), never sooner than
 *   `paceMinMs` nor later than the fixed backoff of that attempt (backoffDelay).
 *
 * `pace: 'fixed'` keeps the fixed schedule (POLL_PACE=fixed). Time is given by the caller (the
 * poller's injectable clock); nothing here reads the wall clock.
 */
import { PACE_DEFAULTS, backoffDelay, type PaceMode, type PollerSettings } from './config';

export class SiiPace {
  private readonly expected = new Map<string, number>();
  private readonly mode: PaceMode;
  private readonly ageFactor: number;
  private readonly minMs: number;
  private readonly shrink: number;

  constructor(private readonly s: PollerSettings) {
    this.mode = s.pace ?? PACE_DEFAULTS.pace;
    this.ageFactor = s.paceAgeFactor ?? PACE_DEFAULTS.paceAgeFactor;
    this.minMs = s.paceMinMs ?? PACE_DEFAULTS.paceMinMs;
    this.shrink = s.paceShrink ?? PACE_DEFAULTS.paceShrink;
  }

  /** The envelope age at which the SII has lately answered verdicts on `key` (undefined: not learned, or fixed pace). */
  expectedMs(key: string): number | undefined {
    return this.mode === 'adaptive' ? this.expected.get(key) : undefined;
  }

  /** Wait from the upload to its first poll. */
  firstDelay(key: string): number {
    const e = this.expectedMs(key) ?? 0;
    return Math.max(this.s.firstDelayMs, Math.min(e, this.s.backoffMaxMs));
  }

  /** Wait after the `attempts`-th poll (>= 1) that found no verdict, at envelope age `ageMs`. */
  nextDelay(key: string, ageMs: number, attempts: number): number {
    const fixed = backoffDelay(this.s, attempts);
    if (this.mode === 'fixed') return fixed;
    const e = this.expectedMs(key);
    const wait = e !== undefined && ageMs < e ? e - ageMs : ageMs * this.ageFactor;
    return Math.min(Math.max(wait, this.minMs), fixed);
  }

  /**
   * A verdict found at envelope age `ageMs`; `firstPoll`: no poll before found the envelope in
   * process; `inProcessAgeMs`: the age of the last poll that did (when known).
   */
  verdict(key: string, ageMs: number, firstPoll: boolean, inProcessAgeMs?: number): void {
    if (this.mode === 'fixed') return;
    const e = this.expected.get(key);
    // first poll: the verdict came at most at ageMs, maybe much earlier; else between the last
    // poll that found it in process and ageMs
    const next = firstPoll ? (e ?? 0) * (1 - this.shrink) : learnedAfterSearch(e, ageMs, inProcessAgeMs);
    this.expected.set(key, Math.min(Math.max(next, this.s.firstDelayMs), this.s.backoffMaxMs));
  }
}

/**
 * The expectation after a verdict found at age `a` by a poll that followed polls seeing the
 * envelope in process, the last of them at age `l` (when known): an expectation already inside
 * (l, a] stays; otherwise the verdict's age. Without `l`, the expectation only rises to `a`.
 */
function learnedAfterSearch(e: number | undefined, a: number, l: number | undefined): number {
  if (l === undefined || l >= a) return Math.max(e ?? 0, a);
  if (e !== undefined && e > l && e <= a) return e;
  return a;
}
