import { expect } from 'chai';
import crypto, { randomBytes } from 'node:crypto';
import { localKeyWrapper } from '@dte/secrets';
import type { WebhookEventType } from '@dte/status';
import { migratedDatabase } from '../../../test/support/env';
import type { Clock } from '../src/clock';
import { ingestStatus, ingestStatuses, STATUS_CONSUMER, type DteStatusRecord } from '../src/ingest';
import { PgWebhookStore } from '../src/pg-store';
import { signatureV1 } from '../src/signature';
import { createSubscription, rotateSecret } from '../src/subscriptions';
import type { Resolver } from '../src/url-policy';
import { countQueries } from './support/counted-queries';

const publicResolver: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
const check = { policy: { allowLoopback: false }, resolver: publicResolver };
const keys = localKeyWrapper(randomBytes(32).toString('base64'), 'test1');
const clock: Clock = { now: () => Date.parse('2026-11-24T12:00:00Z') };
const ALL = ['dte.emitted', 'dte.status_changed', 'dte.accepted', 'dte.rejected'] as const;

/** one schema with one organization and its subscriptions: all events, accepted only, and one in prod */
async function world(name: string) {
  const db = await migratedDatabase(name);
  const ds = db.dataSource;
  const [org] = await ds.query(`INSERT INTO organizations (name) VALUES ('Org') RETURNING id`);
  const scope = { organizationId: org.id as string, env: 'cert' as const };
  const secrets = new Map<string, string>();
  const sub = async (label: string, events: readonly WebhookEventType[], env: 'cert' | 'prod' = 'cert') => {
    const { subscription, secret } = await createSubscription(
      ds,
      keys,
      { ...scope, env },
      { url: `https://hooks.example.com/${label}`, events: [...events], idempotencyKey: label },
      check,
    );
    secrets.set(subscription.id, secret!);
    return [subscription.id, label] as const;
  };
  const labels = new Map([
    await sub('all', ALL),
    await sub('accepted', ['dte.accepted']),
    await sub('prod', ALL, 'prod'),
  ]);
  return { db, ds, org: scope.organizationId, labels, secrets, store: new PgWebhookStore(ds, keys) };
}

type World = Awaited<ReturnType<typeof world>>;

/** every delivery as a receiver would tell them apart: endpoint, event id, type, data */
async function deliveriesOf(w: World): Promise<string[]> {
  const rows: { subscription_id: string; event_id: string; event_type: string; payload: string }[] =
    await w.ds.query(`SELECT subscription_id, event_id, event_type, payload FROM webhook_deliveries`);
  return rows
    .map((r) => {
      const env = JSON.parse(r.payload);
      expect(env.id).to.equal(r.event_id);
      expect(env.type).to.equal(r.event_type);
      return `${w.labels.get(r.subscription_id)} ${r.event_id} ${r.event_type} ${JSON.stringify(env.data)}`;
    })
    .sort();
}

async function statesOf(w: World): Promise<string[]> {
  const rows: Record<string, unknown>[] = await w.ds.query(
    `SELECT dte_id, sii_status, observed_at, emitted FROM webhook_document_states ORDER BY dte_id`,
  );
  return rows.map((r) => JSON.stringify(r));
}

describe('dte-status ingestion a batch at a time (one transaction per batch)', function () {
  this.timeout(120_000);
  let one: World;
  let batched: World;

  before(async () => {
    one = await world('webhooks_one');
    batched = await world('webhooks_batch');
  });
  after(async () => {
    await one?.db.cleanup();
    await batched?.db.cleanup();
  });

  it('several records of one document and redelivered event ids (in a batch and across batches, and a replay) give exactly the deliveries of one-by-one handling', async () => {
    const D1 = crypto.randomUUID();
    const D2 = crypto.randomUUID();
    let t = Date.parse('2026-11-24T11:00:00Z');
    const rec = (dte: string, sii_status: string, over: Partial<DteStatusRecord> = {}): DteStatusRecord => ({
      event_id: crypto.randomUUID(),
      dte_id: dte,
      organization_id: '',
      sii_env: 'cert',
      tipo_dte: 33,
      folio: dte === D1 ? 101 : 102,
      sii_status,
      track_id: null,
      observed_at: new Date((t += 1000)).toISOString(),
      source: 'test',
      ...over,
    });
    const d1queued = rec(D1, 'queued');
    const d1signed = rec(D1, 'signed');
    const d1sending = rec(D1, 'sending');
    const d2sending = rec(D2, 'sending');
    const d1sok = rec(D1, 'SOK', { track_id: 'T1' });
    const d2sok = rec(D2, 'SOK', { track_id: 'T2' });
    const d1epr = rec(D1, 'EPR', { track_id: 'T1' });
    const d2rch = rec(D2, 'RCH', { track_id: 'T2' });
    // a late record of D1 under a new event id, older than what is known: adds nothing
    const d1late = rec(D1, 'sending', { observed_at: d1signed.observed_at });
    // an imported document: nothing, in a batch or alone
    const imported = rec(crypto.randomUUID(), 'EPR', { track_id: 'T3', imported: true });
    const batches = [
      // several records of D1, D1's SOK twice (a redelivery inside the batch)
      [d1queued, d1signed, d1sending, d2sending, d1sok, d1sok, imported],
      // D1's sending again (a redelivery across batches), the verdicts, the late record
      [d2sok, d1sending, d1epr, d2rch, d1late],
      // the first batch once more (a restart before its offsets were committed)
      [d1queued, d1signed, d1sending, d2sending, d1sok, d1sok],
    ];
    const withOrg = (w: World, r: DteStatusRecord) => ({ ...r, organization_id: w.org });

    // the reference: every record of the stream handled alone, in order
    let oneDue = 0;
    for (const r of batches.flat()) oneDue += (await ingestStatus(withOrg(one, r), one.store, clock)).length;
    const dues = [];
    for (const b of batches)
      dues.push(
        await ingestStatuses(
          b.map((r) => withOrg(batched, r)),
          batched.store,
          clock,
        ),
      );

    const expected = await deliveriesOf(one);
    const got = await deliveriesOf(batched);
    expect(got).to.deep.equal(expected);
    // and what one-by-one gives, spelled out: per endpoint, per document
    const summary = (lines: string[]) =>
      lines.map((l) => {
        const [label, , type, data] = l.split(' ');
        const d = JSON.parse(data!);
        return `${label} ${d.dte_id === D1 ? 'D1' : 'D2'} ${d.sii_status} ${type}`;
      });
    expect(summary(got).sort()).to.deep.equal(
      [
        'all D1 sending dte.status_changed',
        'all D1 SOK dte.emitted',
        'all D1 SOK dte.status_changed',
        'all D1 EPR dte.status_changed',
        'all D1 EPR dte.accepted',
        'accepted D1 EPR dte.accepted',
        'all D2 sending dte.status_changed',
        'all D2 SOK dte.emitted',
        'all D2 SOK dte.status_changed',
        'all D2 RCH dte.status_changed',
        'all D2 RCH dte.rejected',
      ].sort(),
    );
    // each delivery's first attempt is handed out once, with its organization; a replay hands none
    expect(dues.flat()).to.have.length(11);
    expect(oneDue).to.equal(11);
    expect(dues[2]).to.deep.equal([]);
    expect(new Set(dues.flat().map((d) => d.delivery_id)).size).to.equal(11);
    for (const d of dues.flat()) expect(d).to.include({ attempt: 1, organization_id: batched.org });
    // the same remembered state of each document
    const norm = async (w: World) => (await statesOf(w)).map((s) => s.replace(D1, 'D1').replace(D2, 'D2'));
    expect(await norm(batched)).to.deep.equal(await norm(one));
    const [d1state] = await batched.ds.query(
      `SELECT sii_status, observed_at, emitted FROM webhook_document_states WHERE dte_id = $1`,
      [D1],
    );
    expect(d1state).to.deep.equal({ sii_status: 'EPR', observed_at: d1epr.observed_at, emitted: true });
    // every distinct event id of a handled (not imported) record claimed once
    const [claims] = await batched.ds.query(
      `SELECT count(*)::int AS n FROM processed_events WHERE consumer = $1`,
      [STATUS_CONSUMER],
    );
    expect(claims.n).to.equal(9);
  });

  it('a batch that fails writes nothing: the next handling of the same records delivers them all', async () => {
    const dte = crypto.randomUUID();
    const ok = {
      event_id: crypto.randomUUID(),
      dte_id: dte,
      organization_id: batched.org,
      sii_env: 'cert' as const,
      tipo_dte: 33,
      folio: 5,
      sii_status: 'SOK',
      track_id: 'T9',
      observed_at: '2026-11-24T11:30:00.000Z',
      source: 'test',
    };
    const bad = { ...ok, event_id: crypto.randomUUID(), dte_id: 'not-a-uuid' };
    const err = await ingestStatuses([ok, bad], batched.store, clock).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    const count = async () =>
      (
        await batched.ds.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE payload LIKE '%' || $1 || '%'`,
          [dte],
        )
      )[0].n as number;
    expect(await count()).to.equal(0);
    expect(await ingestStatuses([ok], batched.store, clock)).to.have.length(2); // emitted + status_changed
    expect(await count()).to.equal(2);
  });

  it('attempts claimed and recorded at the same time share statements: each attempt is claimed once, by one caller, with its own subscription and secret', async () => {
    const dtes = Array.from({ length: 6 }, () => crypto.randomUUID());
    const due = await ingestStatuses(
      dtes.map((dte, i) => ({
        event_id: crypto.randomUUID(),
        dte_id: dte,
        organization_id: batched.org,
        sii_env: 'cert' as const,
        tipo_dte: 33,
        folio: 200 + i,
        sii_status: 'EPR',
        track_id: `T${i}`,
        observed_at: '2026-11-24T11:40:00.000Z',
        source: 'test',
      })),
      batched.store,
      clock,
    );
    // emitted, status_changed, accepted to "all"; accepted to "accepted"
    expect(due).to.have.length(24);
    const now = new Date(clock.now());
    const lease = new Date(clock.now() + 30_000);
    // a second process racing this one (its own store and coalescers), and duplicate requests
    const other = new PgWebhookStore(batched.ds, keys);
    const claims = await Promise.all(
      due.flatMap((d) => [
        batched.store.claimAttempt(d.delivery_id, 1, now, lease),
        batched.store.claimAttempt(d.delivery_id, 1, now, lease),
        other.claimAttempt(d.delivery_id, 1, now, lease),
        batched.store.claimAttempt(d.delivery_id, 2, now, lease), // not the next attempt
      ]),
    );
    const won = claims.filter((c) => c !== null);
    expect(won).to.have.length(24);
    expect(new Set(won.map((c) => c!.delivery.id))).to.deep.equal(new Set(due.map((d) => d.delivery_id)));
    for (const c of won) {
      const d = due.find((x) => x.delivery_id === c!.delivery.id)!;
      expect(c!.subscription.id).to.equal(d.subscription_id);
      // signs as the subscription's secret does
      expect(signatureV1(c!.secret, 1, 'body')).to.equal(
        signatureV1(batched.secrets.get(d.subscription_id)!, 1, 'body'),
      );
      expect(c!.delivery.attempts).to.equal(0);
      expect(c!.delivery.lease_until?.getTime()).to.equal(lease.getTime());
    }
    // held: nobody claims them again until the lease lapses
    expect(await batched.store.claimAttempt(due[0]!.delivery_id, 1, now, lease)).to.equal(null);

    const at = new Date(clock.now() + 1000);
    await Promise.all(
      due.map((d) => batched.store.markDelivered(d.delivery_id, 1, at, { status: 200, error: null })),
    );
    await batched.store.markDelivered(due[0]!.delivery_id, 1, at, { status: 500, error: 'again' }); // no effect
    const rows: { state: string; attempts: number; last_status: number; n: number }[] =
      await batched.ds.query(
        `SELECT state, attempts, last_status, count(*)::int AS n FROM webhook_deliveries
        WHERE id = ANY($1::uuid[]) GROUP BY 1, 2, 3`,
        [due.map((d) => d.delivery_id)],
      );
    expect(rows).to.deep.equal([{ state: 'delivered', attempts: 1, last_status: 200, n: 24 }]);
    const later = new Date(clock.now() + 3_600_000);
    expect(await batched.store.claimAttempt(due[0]!.delivery_id, 2, later, lease)).to.equal(null);
  });
  it('delivered marks and claims made at the same time go in one statement, and each delivery still gets its own attempt record; a rotated secret signs the next claim', async () => {
    const dtes = Array.from({ length: 5 }, () => crypto.randomUUID());
    const due = await ingestStatuses(
      dtes.map((dte, i) => ({
        event_id: crypto.randomUUID(),
        dte_id: dte,
        organization_id: batched.org,
        sii_env: 'cert' as const,
        tipo_dte: 33,
        folio: 300 + i,
        sii_status: 'EPR',
        track_id: `U${i}`,
        observed_at: '2026-11-24T11:50:00.000Z',
        source: 'test',
      })),
      batched.store,
      clock,
    );
    expect(due).to.have.length(20);
    // a store whose statements are counted
    const statements = countQueries(batched.ds);
    const store = new PgWebhookStore(statements.counted, keys);
    const now = new Date(clock.now());
    const lease = new Date(clock.now() + 30_000);
    const [firstHalf, secondHalf] = [due.slice(0, 10), due.slice(10)];
    const claimed = await Promise.all(firstHalf.map((d) => store.claimAttempt(d.delivery_id, 1, now, lease)));
    expect(claimed.every((c) => c !== null)).to.equal(true);
    expect(statements.count()).to.equal(1);

    // the first half's results, each its own, with the claims of the second half (and a claim of a
    // delivery being marked, which waits for the mark and then finds it delivered)
    statements.reset();
    const at = (i: number) => new Date(clock.now() + 1000 + i);
    const round = await Promise.all([
      ...firstHalf.map((d, i) =>
        store.markDelivered(d.delivery_id, 1, at(i), { status: 200 + i, error: null }).then(() => 'marked'),
      ),
      ...secondHalf.map((d) => store.claimAttempt(d.delivery_id, 1, now, lease)),
      store.claimAttempt(firstHalf[0]!.delivery_id, 2, new Date(clock.now() + 3_600_000), lease),
    ]);
    expect(round.slice(0, 10)).to.deep.equal(Array(10).fill('marked'));
    const claims = round.slice(10, 20) as Awaited<ReturnType<PgWebhookStore['claimAttempt']>>[];
    expect(claims.map((c) => c?.delivery.id)).to.deep.equal(secondHalf.map((d) => d.delivery_id));
    expect(round[20]).to.equal(null); // delivered: no attempt 2
    expect(statements.count()).to.equal(2); // marks + claims in one, the claim of a marked delivery after it

    const rows: { id: string; state: string; attempts: number; last_status: number; completed_at: Date }[] =
      await batched.ds.query(
        `SELECT id, state, attempts, last_status, completed_at FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
        [firstHalf.map((d) => d.delivery_id)],
      );
    for (const [i, d] of firstHalf.entries()) {
      const r = rows.find((x) => x.id === d.delivery_id)!;
      expect([r.state, r.attempts, r.last_status, r.completed_at.getTime()]).to.deep.equal([
        'delivered',
        1,
        200 + i,
        at(i).getTime(),
      ]);
    }
    const leased: { n: number }[] = await batched.ds.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries
        WHERE id = ANY($1::uuid[]) AND state = 'pending' AND attempts = 0 AND lease_until = $2`,
      [secondHalf.map((d) => d.delivery_id), lease],
    );
    expect(leased[0]!.n).to.equal(10);

    // the opened secret is kept per sealed value: a rotation signs the very next claim
    const sub = secondHalf[0]!.subscription_id;
    const rotated = await rotateSecret(batched.ds, keys, { organizationId: batched.org, env: 'cert' }, sub);
    await batched.ds.query(`UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1`, [
      secondHalf[0]!.delivery_id,
    ]);
    const again = await store.claimAttempt(secondHalf[0]!.delivery_id, 1, now, lease);
    expect(signatureV1(again!.secret, 1, 'body')).to.equal(signatureV1(rotated.secret, 1, 'body'));
    expect(signatureV1(again!.secret, 1, 'body')).to.not.equal(
      signatureV1(batched.secrets.get(sub)!, 1, 'body'),
    );
  });
  it('a batch that creates deliveries is four statements (begin, the claim with the states and the subscriptions, the insert with the states, commit), and its subscriptions are the ones that hear each event', async () => {
    const records: DteStatusRecord[] = Array.from({ length: 5 }, (_, i) => ({
      event_id: crypto.randomUUID(),
      dte_id: crypto.randomUUID(),
      organization_id: batched.org,
      sii_env: 'cert',
      tipo_dte: 33,
      folio: 500 + i,
      sii_status: 'EPR',
      track_id: `T5${i}`,
      observed_at: '2026-11-24T11:40:00.000Z',
      source: 'test',
    }));
    // every statement the PostgreSQL client sends meanwhile (the transaction's too)
    const sent: string[] = [];
    // the node-postgres library the data source loaded
    const proto = (
      batched.ds.driver as unknown as {
        postgres: { Client: { prototype: { query: (...a: unknown[]) => unknown } } };
      }
    ).postgres.Client.prototype;
    const original = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0] as string | { text?: string };
      sent.push((typeof q === 'string' ? q : (q.text ?? '')).trim().split(/\s+/).slice(0, 2).join(' '));
      return original.apply(this, args);
    };
    let due;
    try {
      due = await ingestStatuses(records, batched.store, clock);
    } finally {
      proto.query = original;
    }
    expect(sent).to.deep.equal(['START TRANSACTION', 'WITH h', 'WITH st', 'COMMIT']);
    // each document: dte.emitted, dte.status_changed and dte.accepted to 'all', dte.accepted to 'accepted'
    expect(due).to.have.length(20);
    const rows: { subscription_id: string; event_type: string; n: number }[] = await batched.ds.query(
      `SELECT subscription_id, event_type, count(*)::int AS n FROM webhook_deliveries
        WHERE id = ANY($1::uuid[]) GROUP BY 1, 2 ORDER BY 1, 2`,
      [due.map((d) => d.delivery_id)],
    );
    expect(
      rows.map((r) => `${batched.labels.get(r.subscription_id)} ${r.event_type} ${r.n}`).sort(),
    ).to.deep.equal([
      'accepted dte.accepted 5',
      'all dte.accepted 5',
      'all dte.emitted 5',
      'all dte.status_changed 5',
    ]);
  });

  it('an organization that has no subscription leaves no trace (no claimed event, no state); its first subscription hears the next status of a document already in flight', async () => {
    const [{ id: bare }] = await one.ds.query(
      `INSERT INTO organizations (name) VALUES ('Bare') RETURNING id`,
    );
    const dte = crypto.randomUUID();
    let t = Date.parse('2026-11-24T11:00:00Z');
    const rec = (sii_status: string, track_id: string | null): DteStatusRecord => ({
      event_id: crypto.randomUUID(),
      dte_id: dte,
      organization_id: bare,
      sii_env: 'cert',
      tipo_dte: 33,
      folio: 7,
      sii_status,
      track_id,
      observed_at: new Date((t += 1000)).toISOString(),
      source: 'test',
    });
    const eventsBefore = await one.ds.query(
      `SELECT count(*)::int AS n FROM processed_events WHERE consumer = $1`,
      [STATUS_CONSUMER],
    );
    // a batch of the bare organization beside one of the organization with subscriptions
    const known = crypto.randomUUID();
    const due = await ingestStatuses(
      [
        rec('signed', null),
        rec('sending', 'T-1'),
        { ...rec('sending', 'T-2'), dte_id: known, organization_id: one.org, folio: 8 },
      ],
      one.store,
      clock,
    );
    expect(due.length, 'deliveries of the organization with subscriptions').to.be.greaterThan(0);
    const eventsAfter = await one.ds.query(
      `SELECT count(*)::int AS n FROM processed_events WHERE consumer = $1`,
      [STATUS_CONSUMER],
    );
    expect(
      eventsAfter[0].n - eventsBefore[0].n,
      'only the subscribed organization’s event is claimed',
    ).to.equal(1);
    const states = await one.ds.query(
      `SELECT dte_id FROM webhook_document_states WHERE dte_id = ANY($1::uuid[])`,
      [[dte, known]],
    );
    expect(states.map((r: { dte_id: string }) => r.dte_id)).to.deep.equal([known]);

    // its first subscription hears the document's next status, announced as emitted then
    const { subscription } = await createSubscription(
      one.ds,
      keys,
      { organizationId: bare, env: 'cert' },
      { url: 'https://hooks.example.com/bare', events: [...ALL], idempotencyKey: 'bare' },
      check,
    );
    const next = await ingestStatuses([rec('EPR', 'T-1')], one.store, clock);
    const types: { event_type: string }[] = await one.ds.query(
      `SELECT event_type FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY event_type`,
      [subscription.id],
    );
    expect(next).to.have.length(3);
    expect(types.map((r) => r.event_type)).to.deep.equal([
      'dte.accepted',
      'dte.emitted',
      'dte.status_changed',
    ]);
  });
});
