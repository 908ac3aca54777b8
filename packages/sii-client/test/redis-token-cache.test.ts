import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisTokenCache } from '../src';
import { testStack } from '../../../test/support/env';

describe('RedisTokenCache (real Redis)', () => {
  let redis: Redis;
  let other: Redis;
  const key = `t:${randomBytes(6).toString('hex')}:sii:token:cert:abc`;

  before(async () => {
    const { redisUrl } = await testStack();
    redis = new Redis(redisUrl);
    other = new Redis(redisUrl);
  });
  after(async () => {
    await redis.del(key);
    redis.disconnect();
    other.disconnect();
  });

  it('shares a token between processes until its TTL runs out', async () => {
    const a = new RedisTokenCache(redis);
    const b = new RedisTokenCache(other);
    await a.set(key, 'TOKEN1', 0.3);
    expect(await b.get(key)).to.equal('TOKEN1');
    const ttl = await redis.pttl(key);
    expect(ttl).to.be.within(1, 300);
    await new Promise((r) => setTimeout(r, 400));
    expect(await b.get(key)).to.equal(undefined);
  });

  it('drops a refused token only while the cache still holds that token (compare-and-delete)', async () => {
    const a = new RedisTokenCache(redis);
    const b = new RedisTokenCache(other);
    await a.set(key, 'OLD', 60);
    await b.set(key, 'NEW', 60); // another process renewed it
    await a.delete(key, 'OLD'); // the first one drops the token the SII refused it
    expect(await b.get(key)).to.equal('NEW');
    await a.delete(key, 'NEW');
    expect(await b.get(key)).to.equal(undefined);
    await a.set(key, 'X', 60);
    await a.delete(key);
    expect(await a.get(key)).to.equal(undefined);
  });
});
