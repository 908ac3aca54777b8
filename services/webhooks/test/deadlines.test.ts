import dgram from 'node:dgram';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';

import { postWebhook, type PostOptions } from '../src/http-delivery';
import { timedResolver, type Resolver } from '../src/url-policy';
import { harness } from './support/harness';
import { Receiver } from './support/receiver';
import { makeTestPki, type TestPki } from './support/test-ca';

/** A name server on loopback that receives every query and never answers. */
async function silentNameServer(): Promise<{ address: string; close(): void; queries: () => number }> {
  const sock = dgram.createSocket('udp4');
  let n = 0;
  sock.on('message', () => (n += 1));
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(sock.address() as AddressInfo).port}`,
    close: () => sock.close(),
    queries: () => n,
  };
}

/** An https endpoint that answers 200 at once, then trickles its body forever. */
async function slowBodyEndpoint(pki: TestPki) {
  const state = { closed: 0, requests: 0 };
  const server = https.createServer({ key: pki.serverKeyPem, cert: pki.serverCertPem }, (req, res) => {
    state.requests += 1;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('.'), 50);
    res.on('close', () => {
      clearInterval(timer);
      state.closed += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    state,
    url: `https://127.0.0.1:${port}/hook`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const until = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
};

describe('webhook attempts: one deadline for DNS, connect and answer; bodies never read', function () {
  this.timeout(30_000);
  let pki: TestPki;

  before(() => {
    pki = makeTestPki(['localhost', '127.0.0.1', 'receiver.test', 'slow.receiver.test']);
  });

  it('the c-ares resolver gives up on a silent name server after its timeout (no getaddrinfo thread held)', async () => {
    const ns = await silentNameServer();
    try {
      const resolve = timedResolver(300, [ns.address]);
      const started = Date.now();
      const err = await resolve('slow.receiver.test').catch((e: unknown) => e as NodeJS.ErrnoException);
      expect((err as NodeJS.ErrnoException).code).to.equal('ETIMEOUT');
      expect(ns.queries()).to.be.greaterThan(0);
      expect(Date.now() - started).to.be.lessThan(5000);
    } finally {
      ns.close();
    }
  });

  it('closes the socket of an endpoint that trickles an endless body as soon as the status is in', async () => {
    const ep = await slowBodyEndpoint(pki);
    try {
      const opts: PostOptions = { policy: { allowLoopback: true }, timeoutMs: 5000, ca: [pki.caCertPem] };
      const r = await postWebhook(ep.url, '{"id":"evt_x"}', {}, opts);
      expect(r).to.include({ ok: true, status: 200 });
      expect(await until(() => ep.state.closed === 1, 3000), 'endpoint saw its connection closed').to.equal(
        true,
      );
    } finally {
      await ep.close();
    }
  });

  it("a slow-DNS and a slow-body endpoint of one organization do not delay another organization's delivery", async () => {
    const ns = await silentNameServer();
    const slowBody = await slowBodyEndpoint(pki);
    const fast = await new Receiver(pki).start();
    const cares = timedResolver(20_000, [ns.address]); // a name server slower than the attempt deadline
    const resolver: Resolver = (host) =>
      host === 'slow.receiver.test' ? cares(host) : Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    const results: { url: string; error?: string; durationMs: number; at: number }[] = [];
    const post: PostOptions = {
      policy: { allowLoopback: true },
      timeoutMs: 1500,
      ca: [pki.caCertPem],
      resolver,
    };
    const h = harness({
      post: async (url, body, headers) => {
        const r = await postWebhook(url, body, headers, post);
        results.push({ url, error: r.error, durationMs: r.durationMs, at: Date.now() });
        return r;
      },
      concurrency: 16,
      perEndpoint: 4,
    });
    try {
      const slowDnsSub = h.store.addSubscription({
        url: 'https://slow.receiver.test:443/hook',
        organization_id: 'org-a',
      });
      const slowBodySub = h.store.addSubscription({ url: slowBody.url, organization_id: 'org-a' });
      const fastSub = h.store.addSubscription({ url: fast.url('/b'), organization_id: 'org-b' });
      const started = Date.now();
      for (let i = 0; i < 4; i++) {
        h.send(slowDnsSub, `{"id":"evt_a_dns_${i}"}`);
        h.send(slowBodySub, `{"id":"evt_a_body_${i}"}`);
      }
      h.send(fastSub, '{"id":"evt_b"}');
      await fast.waitFor(1, 5000);
      const bArrivedMs = Date.now() - started;
      await h.settled();
      const dns = results.filter((r) => r.url.includes('slow.receiver.test'));
      expect(dns).to.have.length.at.least(1);
      for (const r of dns) {
        // the attempt ends at its deadline, not when the name server would have answered
        expect(r.error).to.equal('timeout');
        expect(r.durationMs).to.be.lessThan(3000);
      }
      const body = results.filter((r) => r.url === slowBody.url);
      expect(body.map((r) => r.error)).to.deep.equal([undefined, undefined, undefined, undefined]);
      expect(await until(() => slowBody.state.closed === 4, 3000)).to.equal(true);
      console.log(
        `      org-b delivered after ${bArrivedMs} ms; org-a slow-DNS attempts ended after ${dns.map((r) => r.durationMs).join(', ')} ms`,
      );
      expect(bArrivedMs, "org-b's delivery did not wait for org-a's attempts").to.be.lessThan(
        Math.min(...dns.map((r) => r.durationMs)),
      );
    } finally {
      h.close();
      ns.close();
      await slowBody.close();
      await fast.close();
    }
  });
});
