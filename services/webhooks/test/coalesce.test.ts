import { expect } from 'chai';
import { Coalescer } from '../src/coalesce';

const turn = () => new Promise((r) => setImmediate(r));

/**
 * The group commit of the delivery rounds: urgent calls of one turn share a flush at once; calls
 * nobody waits for yet linger for company until an urgent call, `hurry()` or their linger ends.
 */
describe('Coalescer (group commit with linger)', () => {
  function recorder(lingerMs: number) {
    const flushes: number[][] = [];
    const c = new Coalescer<number, number>(
      async (items) => {
        flushes.push(items);
        await turn();
        return items.map((i) => i * 10);
      },
      1,
      200,
      lingerMs,
    );
    return { c, flushes };
  }

  it('urgent calls of one turn go in one flush at once, and each gets its own result', async () => {
    const { c, flushes } = recorder(60_000);
    const out = await Promise.all([c.run(1), c.run(2), c.run(3)]);
    expect(out).to.deep.equal([10, 20, 30]);
    expect(flushes).to.deep.equal([[1, 2, 3]]);
  });

  it('calls that are not urgent wait (no flush however many turns pass) until hurry() sends them together', async () => {
    const { c, flushes } = recorder(60_000);
    const a = c.run(1, { urgent: false });
    await turn();
    const b = c.run(2, { urgent: false });
    for (let i = 0; i < 5; i++) await turn();
    expect(flushes).to.deep.equal([]);
    c.hurry();
    expect(await Promise.all([a, b])).to.deep.equal([10, 20]);
    expect(flushes).to.deep.equal([[1, 2]]);
  });

  it('an urgent call takes the lingering ones with it', async () => {
    const { c, flushes } = recorder(60_000);
    const a = c.run(1, { urgent: false });
    await turn();
    expect(await Promise.all([a, c.run(2)])).to.deep.equal([10, 20]);
    expect(flushes).to.deep.equal([[1, 2]]);
  });

  it('calls that are not urgent go by themselves once their linger ends', async () => {
    const { c, flushes } = recorder(5);
    expect(await Promise.all([c.run(1, { urgent: false }), c.run(2, { urgent: false })])).to.deep.equal([
      10, 20,
    ]);
    expect(flushes).to.deep.equal([[1, 2]]);
  });

  it('calls made while a flush is in flight go in the next one: urgent at once after it, the others after their linger or a hurry', async () => {
    const { c, flushes } = recorder(60_000);
    const first = c.run(1);
    await turn(); // the flush of [1] is in flight
    const lazy = c.run(2, { urgent: false });
    await first;
    for (let i = 0; i < 5; i++) await turn();
    expect(flushes).to.deep.equal([[1]]);
    const urgent = c.run(3);
    expect(await Promise.all([lazy, urgent])).to.deep.equal([20, 30]);
    expect(flushes).to.deep.equal([[1], [2, 3]]);
  });

  it('a failed flush fails every call in it, and the next calls still flush', async () => {
    let fail = true;
    const c = new Coalescer<number, number>(async (items) => {
      if (fail) throw new Error('boom');
      return items;
    });
    const r = await Promise.allSettled([c.run(1), c.run(2)]);
    expect(r.map((x) => x.status)).to.deep.equal(['rejected', 'rejected']);
    fail = false;
    expect(await c.run(3)).to.equal(3);
  });
});
