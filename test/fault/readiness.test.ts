// /readyz of every pipeline service when the infrastructure under it goes away, read the way a
// kubelet reads it: real processes (api, signer, sii-uploader, sii-poller, webhooks, rcv-sync) on a Kafka broker of
// their own (killed with SIGKILL and started again) and on PostgreSQL reached through a TCP relay
// that the test cuts. /healthz stays 200 (the process lives); /readyz answers 503 naming what is
// gone, and 200 again once it is back.
import net from 'node:net';

import { expect } from 'chai';

import { testStack } from '../support/env';
import { freePort, startPipelineProcesses, type RunningPipeline } from '../support/pipeline-harness';

/** A TCP relay to `target`; `cut()` drops every connection and refuses new ones until `mend()`. */
async function startRelay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    mend() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        open = false;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

type Answer = { status: number; failing: string[] };

async function ask(url: string): Promise<Answer> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(8000) });
    const body = (await res.json().catch(() => ({}))) as { failing?: { name: string }[] };
    return { status: res.status, failing: (body.failing ?? []).map((f) => f.name).sort() };
  } catch (err) {
    return { status: 0, failing: [`no answer: ${(err as Error).message}`] };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('readiness: /readyz says when Kafka or PostgreSQL is gone, /healthz stays up', function () {
  this.timeout(300_000);
  let p: RunningPipeline;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  const ports: Record<string, number> = {};
  const origin: Record<string, string> = {};

  before(async () => {
    const s = await testStack();
    const pg = new URL(s.databaseUrl);
    relay = await startRelay({ host: pg.hostname, port: Number(pg.port || 5432) });
    const viaRelay = new URL(s.databaseUrl);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    for (const n of ['signer', 'sii-uploader', 'sii-poller', 'webhooks', 'rcv-sync'])
      ports[n] = await freePort();
    p = await startPipelineProcesses({
      label: 'readiness',
      privateKafka: true,
      withWebhooks: {},
      withRcvSync: true,
      env: {
        DATABASE_URL: viaRelay.toString(),
        SIGNER_HEALTH_PORT: String(ports.signer),
        SII_UPLOADER_HEALTH_PORT: String(ports['sii-uploader']),
        SII_POLLER_HEALTH_PORT: String(ports['sii-poller']),
        WEBHOOKS_HEALTH_PORT: String(ports.webhooks),
        RCV_SYNC_HEALTH_PORT: String(ports['rcv-sync']),
      },
    });
    origin.api = new URL(p.apiUrl).origin;
    for (const n of Object.keys(ports)) origin[n] = `http://127.0.0.1:${ports[n]}`;
  });
  after(async () => {
    await p?.close();
    await relay?.close();
  });

  const all = async (path: string) =>
    Object.fromEntries(
      await Promise.all(Object.entries(origin).map(async ([n, o]) => [n, await ask(`${o}${path}`)] as const)),
    );
  /** polls /readyz until every service answers as `want` says (or the deadline), returns the last answers */
  async function readyzUntil(want: (a: Answer) => boolean, ms = 60_000) {
    const deadline = Date.now() + ms;
    let last = await all('/readyz');
    while (!Object.values(last).every(want) && Date.now() < deadline) {
      await sleep(500);
      last = await all('/readyz');
    }
    return last;
  }
  const databaseName = (n: string) => (n === 'api' ? 'postgresql' : 'database');

  it('every service is ready while everything runs, and serves its /metrics', async () => {
    const answers = await readyzUntil((a) => a.status === 200);
    for (const [n, a] of Object.entries(answers)) expect(a, n).to.deep.equal({ status: 200, failing: [] });
    expect(Object.keys(origin).sort()).to.deep.equal(
      ['api', 'rcv-sync', 'signer', 'sii-poller', 'sii-uploader', 'webhooks'].sort(),
    );
    for (const [n, o] of Object.entries(origin)) {
      const res = await fetch(`${o}/metrics`);
      expect(res.status, n).to.equal(200);
      expect(await res.text(), n).to.match(/^process_resident_memory_bytes \d+/m);
    }
  });

  it('Kafka killed: every service answers /readyz 503 naming kafka, /healthz 200; ready again once it is back', async () => {
    await p.kafka!.kill9();
    const down = await readyzUntil((a) => a.status === 503 && a.failing.includes('kafka'));
    for (const [n, a] of Object.entries(down))
      expect(a, n).to.deep.equal({ status: 503, failing: ['kafka'] });
    for (const [n, a] of Object.entries(await all('/healthz'))) expect(a.status, n).to.equal(200);
    await p.kafka!.up();
    const back = await readyzUntil((a) => a.status === 200, 120_000);
    for (const [n, a] of Object.entries(back)) expect(a, n).to.deep.equal({ status: 200, failing: [] });
  });

  it('PostgreSQL gone: every service answers /readyz 503 naming its database check, /healthz 200', async () => {
    relay.cut();
    try {
      const down = await readyzUntil((a) => a.status === 503);
      for (const [n, a] of Object.entries(down)) {
        expect(a.status, n).to.equal(503);
        expect(a.failing, n).to.include(databaseName(n));
      }
      for (const [n, a] of Object.entries(await all('/healthz'))) expect(a.status, n).to.equal(200);
    } finally {
      relay.mend();
    }
    const back = await readyzUntil((a) => a.status === 200, 60_000);
    for (const [n, a] of Object.entries(back)) expect(a, n).to.deep.equal({ status: 200, failing: [] });
  });
});
