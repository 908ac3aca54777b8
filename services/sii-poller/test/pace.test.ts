import { expect } from 'chai';
import { SiiPace, loadConfig, type PollerSettings } from '../src';

const settings: PollerSettings = {
  firstDelayMs: 3000,
  backoffBaseMs: 5000,
  backoffFactor: 2,
  backoffMaxMs: 600_000,
  maxAttempts: 40,
  tickMs: 1000,
  leaseMs: 120_000,
  concurrency: 8,
};

/**
 * An SII that answers every envelope's verdict `verdictMs` after its upload: the polls one
 * envelope gets under `pace`, as envelope ages (ms), the SII's own pace learned from those before.
 */
function pollsOf(pace: SiiPace, verdictMs: number): number[] {
  const key = 'dte:cert';
  const ages = [pace.firstDelay(key)];
  while (ages.at(-1)! < verdictMs) {
    const age = ages.at(-1)!;
    ages.push(age + pace.nextDelay(key, age, ages.length));
    if (ages.length > 40) throw new Error('no verdict in 40 polls');
  }
  pace.verdict(key, ages.at(-1)!, ages.length === 1, ages.at(-2));
  return ages;
}

/**
 * `n` envelopes uploaded together (the bench's warm-up round, or a burst after a restart) while
 * nothing is learned: they search side by side, each poll's wait computed with what the pace knows
 * at that instant; the ages at which each found its verdict.
 */
function searchTogether(pace: SiiPace, verdictMs: number, n: number): number[] {
  const key = 'dte:cert';
  // each poll lands a little after it was due (the poller's tick, the SII's answer): 0-900 ms
  const jitter = (i: number, k: number) => ((i * 7 + k * 3) % 10) * 100;
  const env = Array.from({ length: n }, (_, i) => ({
    ages: [pace.firstDelay(key) + jitter(i, 0)],
    found: false,
  }));
  while (env.some((x) => !x.found)) {
    // the next due poll of all the envelopes (same upload instant: age = time)
    const i = env.findIndex(
      (x) =>
        !x.found && x.ages.at(-1) === Math.min(...env.filter((y) => !y.found).map((y) => y.ages.at(-1)!)),
    );
    const x = env[i]!;
    const age = x.ages.at(-1)!;
    if (age >= verdictMs) {
      x.found = true;
      pace.verdict(key, age, x.ages.length === 1, x.ages.at(-2));
    } else x.ages.push(age + pace.nextDelay(key, age, x.ages.length) + jitter(i, x.ages.length));
  }
  return env.map((x) => x.ages.at(-1)!);
}

describe('sii-poller: the poll pace follows the SII', () => {
  it('a fixed pace polls at the first delay and then backs off geometrically, whatever the SII does', () => {
    const pace = new SiiPace({ ...settings, pace: 'fixed' });
    for (let i = 0; i < 5; i++) expect(pollsOf(pace, 30_000)).to.deep.equal([3000, 8000, 18_000, 38_000]);
  });

  it('learns the SII verdict time: after the first envelope, one poll per envelope whatever the latency', () => {
    for (const verdictMs of [0, 5000, 60_000]) {
      const pace = new SiiPace(settings);
      const first = pollsOf(pace, verdictMs);
      expect(first.length, `first envelope at ${verdictMs} ms`).to.be.at.most(verdictMs > 3000 ? 10 : 1);
      const later = Array.from({ length: 200 }, () => pollsOf(pace, verdictMs));
      const polls = later.reduce((n, a) => n + a.length, 0);
      // a verdict found at the first poll lowers the expectation a little (the SII may be
      // quicker now): a second poll now and then, never a poll per intermediate state
      expect(polls / later.length, `polls per envelope at ${verdictMs} ms`).to.be.below(1.3);
      // and the verdict is found soon after the SII gives it
      for (const a of later) expect(a.at(-1)! - verdictMs).to.be.at.most(Math.max(3000, verdictMs * 0.55));
    }
  });

  it('after a first search, envelopes that searched beside the first do not raise the expected time to their own overshoot', () => {
    // the slow SII profile: register 30 s, 6 intermediate states of 10 s: EPR at 90 s; ten
    // envelopes uploaded together search it, each poll a little late
    for (const verdictMs of [20_000, 90_000, 300_000]) {
      const pace = new SiiPace(settings);
      const found = searchTogether(pace, verdictMs, 10);
      expect(Math.max(...found), `search at ${verdictMs} ms`).to.be.above(Math.min(...found));
      // the next envelopes are first polled when the first of the search found its verdict, not
      // at the latest sibling's age
      expect(pace.firstDelay('dte:cert'), `expected after the search at ${verdictMs} ms`).to.equal(
        Math.min(...found),
      );
      const later = Array.from({ length: 50 }, () => pollsOf(pace, verdictMs));
      // and about one poll per envelope after it (a second or third while the expectation,
      // lowered 3 % a verdict, dips under the SII's time)
      expect(later.reduce((n, a) => n + a.length, 0) / later.length).to.be.below(2);
    }
  });

  it('follows an SII that slows down and one that speeds up again', () => {
    const pace = new SiiPace(settings);
    for (let i = 0; i < 20; i++) pollsOf(pace, 5000);
    const slow = Array.from({ length: 50 }, () => pollsOf(pace, 40_000));
    expect(slow[0]!.length).to.be.at.most(10);
    expect(slow.slice(10).every((a) => a.length <= 2)).to.equal(true);
    Array.from({ length: 100 }, () => pollsOf(pace, 5000));
    // back near the quick SII's time: the first poll no later than a few seconds after its verdict
    expect(pace.firstDelay('dte:cert')).to.be.below(9000);
  });

  it('never polls sooner than the minimum nor later than the fixed backoff, nor before the first delay', () => {
    const pace = new SiiPace({ ...settings, paceMinMs: 700 });
    expect(pace.nextDelay('dte:cert', 100, 1)).to.equal(700);
    expect(pace.nextDelay('dte:cert', 10_000_000, 3)).to.equal(20_000);
    pollsOf(pace, 0);
    expect(pace.firstDelay('dte:cert')).to.equal(3000);
    // channels and environments learn apart
    for (let i = 0; i < 5; i++) pollsOf(pace, 50_000);
    expect(pace.firstDelay('boleta:cert')).to.equal(3000);
  });

  it('reads its settings from POLL_PACE* and refuses bad values at start-up', () => {
    const env = { MASTER_KEY: Buffer.alloc(32).toString('base64') };
    expect(loadConfig(env)).to.include({
      pace: 'adaptive',
      paceAgeFactor: 0.5,
      paceMinMs: 500,
      paceShrink: 0.03,
    });
    expect(loadConfig({ ...env, POLL_PACE: 'fixed', POLL_PACE_AGE_FACTOR: '0.25' })).to.include({
      pace: 'fixed',
      paceAgeFactor: 0.25,
    });
    expect(() => loadConfig({ ...env, POLL_PACE: 'fast' })).to.throw(/POLL_PACE/);
    expect(() => loadConfig({ ...env, POLL_PACE_SHRINK: '1.5' })).to.throw(/POLL_PACE_SHRINK/);
  });
});
