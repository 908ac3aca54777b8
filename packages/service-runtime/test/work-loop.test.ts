import { expect } from 'chai';
import { LoopPause } from '../src/work-loop';

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
});
