/**
 * Webhooks fed by the real emission pipeline: the api (HTTP, outbox relay, projector), the
 * signer, sii-uploader and sii-poller and the SII simulator (test/pipeline/harness.ts), plus the
 * webhooks service, all in this process on the real broker, registry, PostgreSQL and Redis. A
 * subscription registered through POST /webhooks receives, over https on loopback (test CA),
 * every event of two emissions issued through POST /dtes: one the SII accepts and one it rejects.
 * Nothing is published by the test itself; the expected events are derived from each document's
 * own status feed (GET /dtes/:id/events) and @dte/status classify().
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { classify } from '@dte/status';
import { body, emit } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import { Receiver, type Received } from '../../services/webhooks/test/support/receiver';
import { eventually, simAdmin, startPipeline, type Pipeline } from '../pipeline/harness';
import { allowLoopbackReceivers, startTestWebhooks, type WebhooksService } from '../support/webhooks-service';

const ALL = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'];
const ENVELOPE_KEYS = ['created_at', 'data', 'id', 'type'];
const DATA_KEYS = [
  'accion',
  'categoria',
  'dte_id',
  'folio',
  'observed_at',
  'sii_env',
  'sii_status',
  'terminal',
  'tipo_dte',
];
/** statuses internal to the service before anything is sent: no status_changed (spec: from sending on) */
const BEFORE_SENDING = new Set(['queued', 'signed']);

interface Envelope {
  id: string;
  type: string;
  created_at: string;
  data: {
    dte_id: string;
    tipo_dte: number;
    folio: number;
    sii_status: string;
    sii_env: string;
    observed_at: string;
    terminal: boolean;
    categoria: string;
    accion: string;
  };
}

interface FeedEntry {
  sii_status: string;
  track_id: number | null;
  observed_at: string;
}

/** HMAC-SHA256 of `<t>.<raw body>` computed by openssl, independently of the service's code. */
function opensslHmac(secret: string, t: string, raw: Buffer): string {
  const out = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret], {
    input: Buffer.concat([Buffer.from(`${t}.`), raw]),
  });
  const m = /([0-9a-f]{64})\s*$/.exec(out.stdout.toString());
  if (!m) throw new Error(`openssl dgst failed: ${out.stderr.toString()}`);
  return m[1]!;
}

function checkSignature(secret: string, r: Received): void {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['service-signature']));
  expect(m, `Service-Signature header: ${String(r.headers['service-signature'])}`).to.not.equal(null);
  expect(Math.abs(Number(m![1]) * 1000 - r.at), 'signature time within the 5 min tolerance').to.be.below(
    300_000,
  );
  expect(opensslHmac(secret, m![1]!, r.raw), 'HMAC by openssl over <t>.<raw body>').to.equal(m![2]);
}

/** Every string anywhere inside a JSON value. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

describe('webhooks fed by the real emission pipeline: POST /dtes to signed deliveries over https', function () {
  this.timeout(90_000);
  let p: Pipeline;
  let webhooks: WebhooksService;
  let rx: Receiver;
  let restoreEnv: () => void;

  before(async () => {
    // the api reads the test-only loopback setting when its routes are built (honoured: NODE_ENV=test)
    restoreEnv = allowLoopbackReceivers();
    p = await startPipeline();
    // the simulator's intermediate states (six, 300 ms each, read live) span several of the
    // poller's polls (backoff at most 500 ms), so some of them are observed and delivered, and the
    // verdict still comes well within the poller's attempt budget
    p.t.sim.options.timings.stepMs = 300;
    // the api's database and master key: the service opens the secrets the api sealed
    webhooks = await startTestWebhooks({
      name: 'webhooks-pipeline-e2e',
      api: p.t,
      messaging: p.msg.messaging,
      env: { WEBHOOKS_TIMEOUT: '5s', WEBHOOKS_FIRST_ATTEMPT_GRACE: '500ms', WEBHOOKS_RETRY_GRACE: '2s' },
    });
    rx = await new Receiver(webhooks.pki).start();
  });

  after(async () => {
    await webhooks?.close();
    await p?.close();
    await rx?.close();
    restoreEnv?.();
  });

  const status = async (id: string): Promise<Record<string, unknown>> =>
    (await call(p.t.url, 'GET', `/dtes/${id}`, { key: p.o.key })).body;
  const feed = async (id: string): Promise<FeedEntry[]> =>
    (await call(p.t.url, 'GET', `/dtes/${id}/events`, { key: p.o.key })).body.data as FeedEntry[];
  const verdict = (id: string) =>
    eventually(`a verdict for ${id}`, async () => {
      const s = await status(id);
      return (s.estado as { terminal: boolean }).terminal ? s : undefined;
    });

  it('delivers every event of an accepted and a rejected emission once per event id, each signed as openssl checks, classified as @dte/status says', async () => {
    const created = await call(p.t.url, 'POST', '/webhooks', {
      key: p.o.key,
      json: { url: rx.url('/hooks'), events: ALL },
      headers: { 'Idempotency-Key': 'pipeline-e2e' },
    });
    expect(created.status, created.text).to.equal(201);
    const secret = created.body.secret as string;

    // one envelope the SII accepts, then one its RCH trigger rejects (triggers apply per upload)
    const a = await emit(p.t, p.o, body(33, p.o.rut, 12345));
    expect(a.status, a.text).to.equal(202);
    const accepted = a.body.id as string;
    expect((await verdict(accepted)).sii_status).to.equal('EPR');
    await simAdmin(p.t, 'POST', '/admin/triggers', { kind: 'verdict', verdict: 'RCH', env: 'cert' });
    const b = await emit(p.t, p.o, body(33, p.o.rut, 6789));
    expect(b.status, b.text).to.equal(202);
    const rejected = b.body.id as string;
    expect((await verdict(rejected)).sii_status).to.equal('RCH');

    // what each document's own feed says must be delivered
    const expected = new Map<string, string[]>();
    const feeds = new Map<string, FeedEntry[]>();
    for (const id of [accepted, rejected]) {
      const f = await feed(id);
      feeds.set(id, f);
      const changes = f.map((e) => e.sii_status).filter((s) => !BEFORE_SENDING.has(s));
      const list = [...changes.map((s) => `dte.status_changed:${s}`)];
      const firstWithTrack = f.find((e) => e.track_id !== null);
      expect(firstWithTrack, `${id} got a track id`).to.not.equal(undefined);
      list.push(`dte.emitted:${firstWithTrack!.sii_status}`);
      const last = changes[changes.length - 1]!;
      if (classify(last).categoria === 'aceptado') list.push(`dte.accepted:${last}`);
      if (classify(last).categoria === 'rechazado') list.push(`dte.rejected:${last}`);
      expected.set(id, list.sort());
    }
    const ours = (r: Received) => {
      const e = JSON.parse(r.raw.toString()) as Envelope;
      return e.data?.dte_id === accepted || e.data?.dte_id === rejected;
    };
    const total = [...expected.values()].reduce((n, l) => n + l.length, 0);
    await eventually(
      `${total} distinct deliveries`,
      async () =>
        new Set(rx.received.filter(ours).map((r) => (JSON.parse(r.raw.toString()) as Envelope).id)).size >=
        total
          ? true
          : undefined,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1500)); // nothing more may arrive

    // every request: headers, signature, envelope shape, classification; repeats carry the same bytes
    const byId = new Map<string, { e: Envelope; raw: Buffer; times: number }>();
    const personal = [p.o.rut, '77777777-7', 'EMPRESA DE PRUEBA', 'Cliente de Prueba'];
    for (const r of rx.received) {
      expect(r.method).to.equal('POST');
      expect(r.path).to.equal('/hooks');
      expect(r.headers['content-type']).to.match(/^application\/json/);
      expect(r.headers['user-agent']).to.equal('Service-Webhooks/1.0');
      checkSignature(secret, r);
      const e = JSON.parse(r.raw.toString()) as Envelope;
      expect(Object.keys(e).sort()).to.deep.equal(ENVELOPE_KEYS);
      expect(Object.keys(e.data).sort()).to.deep.equal(DATA_KEYS);
      expect(e.id).to.match(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      for (const s of strings(e)) for (const x of personal) expect(s).to.not.include(x);
      const c = classify(e.data.sii_status);
      expect(
        { terminal: e.data.terminal, categoria: e.data.categoria, accion: e.data.accion },
        `${e.type} ${e.data.sii_status}`,
      ).to.deep.equal({ terminal: c.terminal, categoria: c.categoria, accion: c.accion });
      const seen = byId.get(e.id);
      if (seen) {
        expect(r.raw.equals(seen.raw), `repeat of ${e.id} with the same bytes`).to.equal(true);
        seen.times += 1;
      } else byId.set(e.id, { e, raw: r.raw, times: 1 });
    }
    const repeats = [...byId.values()].filter((x) => x.times > 1);
    // deliveries may repeat (spec); a handler is idempotent by id, so what counts is one per id
    if (repeats.length > 0) console.log(`      (${repeats.length} event ids were delivered more than once)`);

    const unique = [...byId.values()].map((x) => x.e);
    for (const [id, doc] of [
      [accepted, a.body],
      [rejected, b.body],
    ] as const) {
      const events = unique.filter((e) => e.data.dte_id === id);
      const got = events.map((e) => `${e.type}:${e.data.sii_status}`).sort();
      expect(got, `events of ${id === accepted ? 'the accepted' : 'the rejected'} document`).to.deep.equal(
        expected.get(id),
      );
      for (const e of events)
        expect(e.data).to.deep.include({ tipo_dte: 33, folio: doc.folio as number, sii_env: 'cert' });
      // the feed records, once per status: each status_changed carries its transition's instant
      const f = feeds.get(id)!;
      for (const e of events.filter((x) => x.type === 'dte.status_changed')) {
        const entry = f.find((x) => x.sii_status === e.data.sii_status)!;
        expect(Date.parse(e.data.observed_at), e.data.sii_status).to.equal(Date.parse(entry.observed_at));
      }
      // dte.emitted once, for the first record that had the track id
      const emitted = events.filter((e) => e.type === 'dte.emitted');
      expect(emitted).to.have.length(1);
      const entry = f.find((x) => x.sii_status === emitted[0]!.data.sii_status)!;
      expect(entry.track_id, 'dte.emitted only once the track id exists').to.be.a('number');
      // verdicts travel with their own status_changed (same transition)
      const verdictEvent = events.find((e) => e.type === 'dte.accepted' || e.type === 'dte.rejected')!;
      const pair = events.filter(
        (e) => e.type === 'dte.status_changed' && e.data.sii_status === verdictEvent.data.sii_status,
      );
      expect(pair).to.have.length(1);
      expect(pair[0]!.data.observed_at).to.equal(verdictEvent.data.observed_at);
    }
    // deliveries may arrive out of order: a handler orders them by data.observed_at
    const changes = (id: string) =>
      unique
        .filter((e) => e.data.dte_id === id && e.type === 'dte.status_changed')
        .sort((x, y) => Date.parse(x.data.observed_at) - Date.parse(y.data.observed_at))
        .map((e) => e.data.sii_status);
    const codesA = changes(accepted);
    expect(codesA[0]).to.equal('sending');
    expect(codesA[codesA.length - 1]).to.equal('EPR');
    expect(codesA.length, `intermediates between sending and EPR: ${codesA.join(',')}`).to.be.at.least(3);
    expect(unique.find((e) => e.data.dte_id === accepted && e.type === 'dte.accepted')?.data).to.include({
      sii_status: 'EPR',
      terminal: true,
      categoria: 'aceptado',
    });
    expect(unique.find((e) => e.data.dte_id === rejected && e.type === 'dte.rejected')?.data).to.include({
      sii_status: 'RCH',
      terminal: true,
      categoria: 'rechazado',
      accion: 'reemitir',
    });
    console.log(
      `      accepted: ${codesA.join(' → ')}; rejected: ${changes(rejected).join(' → ')}; ${rx.received.length} requests, ${byId.size} distinct ids, ${repeats.length} repeated`,
    );
  });
});
