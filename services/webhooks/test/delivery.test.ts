import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { ingestStatus, type DteStatusRecord } from '../src/ingest';
import { SIGNATURE_HEADER, USER_AGENT_FOR_TESTS } from './support/constants';
import { harness } from './support/harness';
import { Receiver } from './support/receiver';
import { SmtpSink } from './support/smtp';
import { makeTestPki, type TestPki } from './support/test-ca';
import type { PostOptions } from '../src/http-delivery';
import type { Resolver } from '../src/url-policy';

/** Independent check of a signature: openssl's HMAC over `<t>.<raw body>` as received. */
function opensslHmac(secret: string, t: string, raw: Buffer): string {
  const out = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret], {
    input: Buffer.concat([Buffer.from(`${t}.`), raw]),
  });
  if (out.status !== 0) throw new Error(out.stderr.toString());
  return /([0-9a-f]{64})\s*$/.exec(out.stdout.toString())![1]!;
}

function signatureParts(header: unknown): { t: string; v1: string } {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header));
  expect(m, `Service-Signature "${String(header)}"`).to.not.equal(null);
  return { t: m![1]!, v1: m![2]! };
}

const status = (over: Partial<DteStatusRecord>): DteStatusRecord => ({
  event_id: crypto.randomUUID(),
  dte_id: '6c1f7e0a-3f7b-4b8e-9f7a-1d2c3b4a5e6f',
  organization_id: 'org-1',
  sii_env: 'cert',
  tipo_dte: 33,
  folio: 1234,
  sii_status: 'EPR',
  sii_glosa: 'Documento aceptado',
  track_id: '0123456789',
  observed_at: '2026-11-22T03:00:00.000Z',
  imported: false,
  source: 'sii-poller',
  ...over,
});

describe('webhook delivery over https (real receiver on loopback, test CA)', function () {
  let pki: TestPki;
  let post: PostOptions;

  before(() => {
    pki = makeTestPki(['localhost', '127.0.0.1', 'receiver.test']);
    post = { policy: { allowLoopback: true }, timeoutMs: 2000, ca: [pki.caCertPem] };
  });

  it('delivers each event of a transition with the spec headers and a signature openssl accepts', async () => {
    const rx = await new Receiver(pki).start();
    const h = harness({ post });
    try {
      const sub = h.store.addSubscription({ url: rx.url('/dte-hooks?src=1') });
      const due = await ingestStatus(status({}), h.store, h.clock);
      expect(due).to.have.length(3); // dte.emitted, dte.status_changed, dte.accepted
      for (const d of due) h.runner.enqueue(d);
      await rx.waitFor(3);
      await h.settled();
      const types = rx.received.map((r) => JSON.parse(r.raw.toString()).type).sort();
      expect(types).to.deep.equal(['dte.accepted', 'dte.emitted', 'dte.status_changed']);
      for (const r of rx.received) {
        expect(r.method).to.equal('POST');
        expect(r.path).to.equal('/dte-hooks?src=1');
        expect(r.headers['content-type']).to.equal('application/json');
        expect(r.headers['user-agent']).to.equal(USER_AGENT_FOR_TESTS);
        const { t, v1 } = signatureParts(r.headers[SIGNATURE_HEADER.toLowerCase()]);
        expect(Math.abs(Number(t) - Date.now() / 1000)).to.be.lessThan(5);
        expect(opensslHmac(sub.secret, t, r.raw)).to.equal(v1);
        expect(opensslHmac(sub.secret + 'x', t, r.raw)).to.not.equal(v1);
        const env = JSON.parse(r.raw.toString());
        expect(Object.keys(env).sort()).to.deep.equal(['created_at', 'data', 'id', 'type']);
        expect(env.id).to.match(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(Object.keys(env.data).sort()).to.deep.equal([
          'accion',
          'categoria',
          'dte_id',
          'folio',
          'observed_at',
          'sii_env',
          'sii_status',
          'terminal',
          'tipo_dte',
        ]);
        expect(env.data).to.deep.include({
          dte_id: '6c1f7e0a-3f7b-4b8e-9f7a-1d2c3b4a5e6f',
          tipo_dte: 33,
          folio: 1234,
          sii_status: 'EPR',
          sii_env: 'cert',
          observed_at: '2026-11-22T03:00:00.000Z',
          terminal: true,
          categoria: 'aceptado',
          accion: 'ninguna',
        });
        expect(r.raw.toString()).to.not.match(/rut|razon|monto|glosa|track|org-1/i);
      }
      expect([...h.store.deliveries.values()].map((d) => d.state)).to.deep.equal([
        'delivered',
        'delivered',
        'delivered',
      ]);
    } finally {
      h.close();
      await rx.close();
    }
  });

  it('gives a failing receiver exactly five attempts on the schedule, then the delivery is exhausted', async () => {
    const delays = [150, 300, 450, 600];
    const rx = await new Receiver(pki, () => ({ status: 500 })).start();
    const h = harness({ post, delaysMs: delays });
    try {
      const sub = h.store.addSubscription({ url: rx.url() });
      const d = h.send(sub);
      await rx.waitFor(5, 8000);
      await h.settled();
      await new Promise((r) => setTimeout(r, 900)); // a sixth attempt would have come by now
      expect(rx.received).to.have.length(5);
      const gaps = rx.received.slice(1).map((r, i) => r.at - rx.received[i]!.at);
      gaps.forEach((gap, i) => {
        expect(gap, `gap before attempt ${i + 2}`).to.be.at.least(delays[i]! - 5);
        expect(gap, `gap before attempt ${i + 2}`).to.be.below(delays[i]! + 400);
      });
      const rec = h.store.deliveries.get(d.id)!;
      expect(rec).to.include({ state: 'exhausted', attempts: 5, last_status: 500 });
      expect(rec.completed_at).to.be.instanceOf(Date);
      expect(h.store.subscriptions.get(sub.id)!.active).to.equal(true);
    } finally {
      h.close();
      await rx.close();
    }
  });

  it('deactivates an endpoint after three consecutive exhausted deliveries and e-mails the owner once', async () => {
    const smtp = await new SmtpSink().start();
    let failing = true;
    const rx = await new Receiver(pki, () => ({ status: failing ? 503 : 204 })).start();
    const h = harness({
      post,
      delaysMs: [20, 20, 20, 20],
      smtpUrl: smtp.url,
      ownerEmail: 'duena@empresa.test',
    });
    try {
      const sub = h.store.addSubscription({ url: rx.url() });
      // two exhausted, then one delivered: the streak starts over
      h.send(sub);
      h.send(sub);
      await rx.waitFor(10);
      await h.settled();
      failing = false;
      h.send(sub);
      await rx.waitFor(11);
      await h.settled();
      expect(h.store.subscriptions.get(sub.id)!).to.include({ active: true, consecutive_exhausted: 0 });
      failing = true;
      for (let i = 0; i < 3; i++) h.send(sub);
      await rx.waitFor(26);
      await h.settled();
      await new Promise((r) => setTimeout(r, 300));
      const after = h.store.subscriptions.get(sub.id)!;
      expect(after.active).to.equal(false);
      expect(after.disabled_at).to.be.instanceOf(Date);
      expect(after.disabled_reason).to.be.a('string').with.length.greaterThan(0);
      expect(smtp.mails).to.have.length(1);
      expect(smtp.mails[0]!.to).to.deep.equal(['duena@empresa.test']);
      expect(smtp.mails[0]!.raw).to.include(sub.id);
      // the owner reads the moment in Chile's time, dd-mm-aaaa hh:mm (@dte/es-cl), not an ISO instant
      const mail = smtp.mails[0]!.raw.replace(/=\r?\n/g, ''); // quoted-printable's soft breaks
      expect(mail).to.match(/fue desactivado\s+el \d{2}-\d{2}-\d{4} \d{2}:\d{2} \(hora de Chile\)\./);
      expect(mail).to.not.include(after.disabled_at!.toISOString().slice(0, 10));
      // an inactive endpoint is not called again
      const before = rx.received.length;
      const d = h.send(sub);
      await h.settled();
      expect(rx.received.length).to.equal(before);
      expect(h.store.deliveries.get(d.id)!.state).to.equal('exhausted');
      expect(smtp.mails).to.have.length(1);
    } finally {
      h.close();
      await rx.close();
      await smtp.close();
    }
  });

  it('does not follow redirects: a 302 is a failure and the Location is never called', async () => {
    const rx = await new Receiver(pki, (r) =>
      r.path === '/hook' ? { status: 302, headers: { Location: '/moved' } } : { status: 200 },
    ).start();
    const h = harness({ post });
    try {
      const sub = h.store.addSubscription({ url: rx.url('/hook') });
      const d = h.send(sub);
      await rx.waitFor(1);
      await h.settled();
      await new Promise((r) => setTimeout(r, 200));
      expect(rx.received.map((r) => r.path)).to.deep.equal(['/hook']);
      expect(h.store.deliveries.get(d.id)!).to.include({ state: 'exhausted', last_status: 302 });
    } finally {
      h.close();
      await rx.close();
    }
  });

  it('gives up on an endpoint that does not answer within the timeout, without holding up other endpoints', async () => {
    const slow = await new Receiver(pki, () => ({ status: 200, delayMs: 3000 })).start();
    const fast = await new Receiver(pki).start();
    const h = harness({
      post: { ...post, timeoutMs: 600 },
      concurrency: 4,
      perEndpoint: 2,
      disableAfter: 100,
    });
    try {
      const slowSub = h.store.addSubscription({ url: slow.url() });
      const fastSub = h.store.addSubscription({ url: fast.url() });
      const started = Date.now();
      const slowOnes = [1, 2, 3, 4, 5, 6].map(() => h.send(slowSub));
      const quick = h.send(fastSub);
      await fast.waitFor(1);
      const fastLatency = Date.now() - started;
      expect(fastLatency, 'the fast endpoint waited for the slow one').to.be.below(500);
      await h.settled();
      const elapsed = Date.now() - started;
      expect(h.store.deliveries.get(quick.id)!.state).to.equal('delivered');
      for (const d of slowOnes)
        expect(h.store.deliveries.get(d.id)!).to.include({ state: 'exhausted', last_error: 'timeout' });
      // six slow deliveries, two at a time, each cut at 600 ms: three rounds, not 6 x 3 s
      expect(elapsed).to.be.within(1700, 2900);
    } finally {
      h.close();
      await slow.close();
      await fast.close();
    }
  });

  it('connects to exactly the address that was checked, and re-checks the address at every delivery', async () => {
    const rx = await new Receiver(pki).start();
    let answer = '127.0.0.1';
    const resolver: Resolver = async () => [{ address: answer, family: 4 }];
    // receiver.test exists in no DNS: only the checked, pinned address can reach the receiver
    const h = harness({ post: { ...post, resolver } });
    const prod = harness({ post: { ...post, resolver, policy: { allowLoopback: false } } });
    try {
      const sub = h.store.addSubscription({ url: `https://receiver.test:${rx.port}/hook` });
      const d1 = h.send(sub);
      await rx.waitFor(1);
      await h.settled();
      expect(h.store.deliveries.get(d1.id)!.state).to.equal('delivered');
      // the name now points somewhere refused: the delivery fails before any connection
      answer = '169.254.169.254';
      const d2 = h.send(sub);
      await h.settled();
      expect(h.store.deliveries.get(d2.id)!).to.include({
        state: 'exhausted',
        last_error: 'invalid_webhook_url:metadata',
      });
      // without the test-only setting a name that resolves to loopback is refused (rebinding)
      answer = '127.0.0.1';
      const psub = prod.store.addSubscription({ url: 'https://hooks.example.com/hook' });
      const d3 = prod.send(psub);
      await prod.settled();
      expect(prod.store.deliveries.get(d3.id)!).to.include({ last_error: 'invalid_webhook_url:loopback' });
      expect(rx.received).to.have.length(1);
    } finally {
      h.close();
      prod.close();
      await rx.close();
    }
  });

  it('refuses a receiver whose certificate is not from a trusted CA', async () => {
    const other = makeTestPki(['127.0.0.1']);
    const rx = await new Receiver(other).start();
    const h = harness({ post });
    try {
      const d = h.send(h.store.addSubscription({ url: rx.url() }));
      await h.settled();
      expect(rx.received).to.have.length(0);
      expect(h.store.deliveries.get(d.id)!.state).to.equal('exhausted');
      expect(h.store.deliveries.get(d.id)!.last_error).to.match(/CERT|SIGNATURE|ISSUER/i);
    } finally {
      h.close();
      await rx.close();
    }
  });
});
