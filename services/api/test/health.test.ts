import { expect } from 'chai';
import Redis from 'ioredis';
import { startTestApi, type TestApi } from './support/test-api';

describe('api health probes (real PostgreSQL and Redis)', function () {
  this.timeout(120_000);
  let t: TestApi;

  before(async () => {
    t = await startTestApi({});
  });
  after(async () => t?.close());

  const root = () => t.url.replace(/\/api\/v1$/, '');

  it('answers /healthz with 200 and an X-Request-Id, without credentials', async () => {
    const res = await fetch(`${root()}/healthz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ status: 'ok' });
    expect(res.headers.get('x-request-id')).to.match(/^req_/);
  });

  it('answers /readyz with 200 when PostgreSQL and Redis answer', async () => {
    const res = await fetch(`${root()}/readyz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ status: 'ready' });
  });

  it('answers /readyz with 503 naming Redis when Redis does not answer', async () => {
    // a second api whose Redis client points at a port where nothing listens
    const deadRedis = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    deadRedis.on('error', () => undefined); // the refusals are the point of this test
    const broken = await startTestApi({ deps: { redis: deadRedis } });
    try {
      const res = await fetch(`${broken.url.replace(/\/api\/v1$/, '')}/readyz`);
      expect(res.status).to.equal(503);
      const body = (await res.json()) as { status: string; failing: { name: string; error: string }[] };
      expect(body.status).to.equal('not_ready');
      expect(body.failing.map((f) => f.name)).to.deep.equal(['redis']);
      // a fixed word, never the driver's text (addresses, users, values)
      expect(body.failing[0]!.error).to.equal('unavailable');
      expect(JSON.stringify(body)).to.not.match(/127\.0\.0\.1|ECONNREFUSED|Connection is closed/);
    } finally {
      await broken.close();
      deadRedis.disconnect();
    }
  });
});
