import { expect } from 'chai';
import type { Caf } from '@dte/engine';
import { OpenedCafs } from '../src/opened-cafs';

const caf = (n: number): Caf =>
  ({ rutEmisor: '76000000-0', tipoDte: 33, desde: n, hasta: n + 10, rsaPrivateKeyPem: `KEY-${n}` }) as Caf;

describe('signer: opened CAFs kept between batches', () => {
  it('opens a CAF once while it is kept, again after it expires (wiping the old key text), and keeps no failure', async () => {
    let clock = 0;
    let opens = 0;
    const kept = new OpenedCafs({ ttlMs: 1000, now: () => clock });
    const open = async () => caf(++opens);
    const first = await kept.get('a', open);
    expect(await kept.get('a', open)).to.equal(first);
    expect(opens).to.equal(1);
    clock = 1001;
    const second = await kept.get('a', open);
    expect(opens).to.equal(2);
    expect(second).to.not.equal(first);
    await new Promise((r) => setImmediate(r));
    expect(first.rsaPrivateKeyPem, 'the expired entry is wiped').to.equal('');
    expect(second.rsaPrivateKeyPem).to.equal('KEY-2');

    const failing = () => Promise.reject(new Error('kms down'));
    await kept.get('b', failing).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect((await kept.get('b', open)).rsaPrivateKeyPem, 'a failure is tried again').to.equal('KEY-3');
  });

  it('keeps at most max CAFs, wiping the oldest', async () => {
    const kept = new OpenedCafs({ max: 2 });
    let n = 0;
    const a = await kept.get('a', async () => caf(++n));
    await kept.get('b', async () => caf(++n));
    await kept.get('c', async () => caf(++n));
    await new Promise((r) => setImmediate(r));
    expect(a.rsaPrivateKeyPem).to.equal('');
    expect(n).to.equal(3);
    await kept.get('c', async () => caf(++n));
    expect(n).to.equal(3);
  });
});
