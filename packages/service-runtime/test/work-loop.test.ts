import { expect } from 'chai';
import { LoopPause, workDueInBatches } from '../src/work-loop';

describe('service-runtime work loop', () => {
  it('a pause lasts its time unless woken; a wake between pauses does not shorten the next', async () => {
    const pause = new LoopPause();
    let t0 = Date.now();
    await pause.sleep(40);
    expect(Date.now() - t0).to.be.at.least(35);

    pause.wake(); // nothing under way: no effect on the next pause
    t0 = Date.now();
    const slept = pause.sleep(5000);
    setTimeout(() => pause.wake(), 20);
    await slept;
    const waited = Date.now() - t0;
    expect(waited).to.be.at.least(15);
    expect(waited).to.be.below(4000);
  });

  it('takes batches until one comes back short, works each item once and reports failures apart', async () => {
    const queue = Array.from({ length: 7 }, (_, i) => i);
    const takes: number[][] = [];
    const done: number[] = [];
    const failed: number[] = [];
    const total = await workDueInBatches(
      async () => {
        const batch = queue.splice(0, 3);
        takes.push(batch);
        return batch;
      },
      3,
      async (n) => {
        if (n === 4) throw new Error('boom');
        done.push(n);
      },
      (err, n) => {
        expect((err as Error).message).to.equal('boom');
        failed.push(n);
      },
    );
    expect(total).to.equal(7);
    expect(takes).to.deep.equal([[0, 1, 2], [3, 4, 5], [6]]);
    expect(done.sort()).to.deep.equal([0, 1, 2, 3, 5, 6]);
    expect(failed).to.deep.equal([4]);
  });

  it('stops at an empty batch', async () => {
    let calls = 0;
    const total = await workDueInBatches(
      async () => {
        calls += 1;
        return calls === 1 ? [1, 2] : [];
      },
      2,
      async () => undefined,
      () => expect.fail('no failure expected'),
    );
    expect(total).to.equal(2);
    expect(calls).to.equal(2);
  });
});
