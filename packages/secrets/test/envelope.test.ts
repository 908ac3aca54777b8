import { expect } from 'chai';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { KmsAuthError, KmsUnavailableError, LocalKeyWrapper, open, seal } from '../src';

/** Independent decryption following the documented format only (iv12 | tag16 | ciphertext, AES-256-GCM). */
function gcmOpen(key: Buffer, blob: Buffer, aad: string): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(blob.subarray(12, 28));
  return Buffer.concat([d.update(blob.subarray(28)), d.final()]);
}

describe('envelope encryption', () => {
  const master = randomBytes(32);
  const wrapper = new LocalKeyWrapper({ k1: master }, 'k1');

  it('seals with a fresh data key per secret, in the documented format', async () => {
    const secret = Buffer.from('contraseña del .p12');
    const a = await seal(wrapper, secret, 'certificate:1:password');
    const b = await seal(wrapper, secret, 'certificate:1:password');
    expect(a).to.include({ v: 1, alg: 'A256GCM', kid: 'k1' });
    expect(a.ct).to.not.equal(b.ct);
    expect(a.wk).to.not.equal(b.wk);
    const dataKey = gcmOpen(master, Buffer.from(a.wk, 'base64'), 'wrap:certificate:1:password');
    expect(dataKey.length).to.equal(32);
    expect(gcmOpen(dataKey, Buffer.from(a.ct, 'base64'), 'certificate:1:password')).to.deep.equal(secret);
    expect(await open(wrapper, a, 'certificate:1:password')).to.deep.equal(secret);
  });

  it('does not open on another row, with a flipped bit, or with another master key', async () => {
    const sealed = await seal(wrapper, Buffer.from('x'), 'caf:1:rsask');
    for (const attempt of [
      () => open(wrapper, sealed, 'caf:2:rsask'),
      () => {
        const ct = Buffer.from(sealed.ct, 'base64');
        ct[ct.length - 1] ^= 1;
        return open(wrapper, { ...sealed, ct: ct.toString('base64') }, 'caf:1:rsask');
      },
      () => open(new LocalKeyWrapper({ k1: randomBytes(32) }, 'k1'), sealed, 'caf:1:rsask'),
      () => open(wrapper, { v: 2 }, 'caf:1:rsask'),
    ]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(KmsAuthError);
    }
  });

  it('reports an absent master key as unavailable', async () => {
    const sealed = await seal(wrapper, Buffer.from('x'), 'a');
    expect(
      await open(new LocalKeyWrapper({ k2: randomBytes(32) }, 'k2'), sealed, 'a').catch((e: unknown) => e),
    ).to.be.instanceOf(KmsUnavailableError);
    expect(
      await seal(new LocalKeyWrapper({}, null), Buffer.from('x'), 'a').catch((e: unknown) => e),
    ).to.be.instanceOf(KmsUnavailableError);
  });
});
