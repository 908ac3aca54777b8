import { expect } from 'chai';
import { ingestStatus, type DteStatusRecord } from '../src/ingest';
import type { Clock } from '../src/clock';
import { MemoryStore } from './support/memory-store';
import { harness } from './support/harness';

const clock: Clock = { now: () => Date.parse('2026-11-22T04:00:00Z') };
const DTE = '11111111-2222-4333-8444-555555555555';
let n = 0;
const rec = (sii_status: string, over: Partial<DteStatusRecord> = {}): DteStatusRecord => ({
  event_id: crypto.randomUUID(),
  dte_id: DTE,
  organization_id: 'org-1',
  sii_env: 'cert',
  tipo_dte: 33,
  folio: 77,
  sii_status,
  track_id: null,
  observed_at: new Date(Date.parse('2026-11-22T03:00:00Z') + ++n * 1000).toISOString(),
  imported: false,
  source: 'test',
  ...over,
});

describe('events produced from dte-status records', () => {
  let store: MemoryStore;
  const types = () =>
    [...store.deliveries.values()].map((d) => `${JSON.parse(d.payload).data.sii_status}:${d.event_type}`);

  beforeEach(() => {
    store = new MemoryStore();
    store.addSubscription({ url: 'https://a.example.com/' });
  });

  it('an accepted emission: emitted once, each change, and the verdict pair', async () => {
    for (const r of [
      rec('queued'),
      rec('signed'),
      rec('sending'),
      rec('SOK', { track_id: 'T1' }),
      rec('EPR', { track_id: 'T1' }),
    ])
      await ingestStatus(r, store, clock);
    expect(types()).to.deep.equal([
      'sending:dte.status_changed',
      'SOK:dte.emitted',
      'SOK:dte.status_changed',
      'EPR:dte.status_changed',
      'EPR:dte.accepted',
    ]);
  });

  it('a replayed or older record produces nothing more', async () => {
    const sok = rec('SOK', { track_id: 'T1' });
    const sending = rec('sending');
    await ingestStatus(sok, store, clock);
    const before = store.deliveries.size;
    expect(await ingestStatus(sok, store, clock)).to.deep.equal([]);
    expect(await ingestStatus(sending, store, clock)).to.deep.equal([]); // later in the stream, older in fact
    expect(store.deliveries.size).to.equal(before);
  });

  it('rejections travel with their own status_changed; requiere_accion outcomes only as status_changed', async () => {
    await ingestStatus(rec('stuck', { track_id: 'T9' }), store, clock);
    await ingestStatus(rec('RCH', { track_id: 'T9' }), store, clock);
    expect(types()).to.deep.equal([
      'stuck:dte.emitted',
      'stuck:dte.status_changed',
      'RCH:dte.status_changed',
      'RCH:dte.rejected',
    ]);
    const other = new MemoryStore();
    other.addSubscription({ url: 'https://a.example.com/' });
    await ingestStatus(rec('emision_fallida', { dte_id: crypto.randomUUID() }), other, clock);
    expect([...other.deliveries.values()].map((d) => d.event_type)).to.deep.equal(['dte.status_changed']);
  });

  it('imported documents produce nothing', async () => {
    await ingestStatus(rec('accepted', { imported: true, track_id: 'T2' }), store, clock);
    await ingestStatus(
      rec('EPR', { imported: true, track_id: 'T2', dte_id: crypto.randomUUID() }),
      store,
      clock,
    );
    expect(store.deliveries.size).to.equal(0);
  });

  it('only subscriptions of the organization and environment, subscribed to the type, active', async () => {
    const only = store.addSubscription({ url: 'https://b.example.com/', events: ['dte.accepted'] });
    store.addSubscription({ url: 'https://c.example.com/', sii_env: 'prod' });
    store.addSubscription({ url: 'https://d.example.com/', organization_id: 'org-2' });
    store.addSubscription({ url: 'https://e.example.com/', active: false });
    await ingestStatus(rec('EPR', { track_id: 'T3' }), store, clock);
    const bySub = new Map<string, string[]>();
    for (const d of store.deliveries.values())
      bySub.set(d.subscription_id, [...(bySub.get(d.subscription_id) ?? []), d.event_type]);
    expect(bySub.size).to.equal(2);
    expect(bySub.get(only.id)).to.deep.equal(['dte.accepted']);
  });

  it('the same event has the same id for every subscription and for a replay', async () => {
    store.addSubscription({ url: 'https://a.example.com/' }); // same URL registered twice
    const r = rec('EPR', { track_id: 'T4' });
    const due = await ingestStatus(r, store, clock);
    expect(due).to.have.length(6);
    const ids = new Set([...store.deliveries.values()].map((d) => d.event_id));
    expect(ids.size).to.equal(3);
    for (const id of ids) expect(id).to.match(/^evt_[0-9a-f-]{36}$/);
  });
});

describe('retention of delivery records', () => {
  it('purges terminal records 90 days after they ended and never a pending one', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const h = harness({
      post: async () => ({ ok: true, status: 200, durationMs: 1 }),
      clock: { now: () => now },
    });
    try {
      const sub = h.store.addSubscription({ url: 'https://a.example.com/' });
      const old = h.send(sub);
      await h.settled();
      now += 2 * 86_400_000;
      const newer = h.send(sub);
      await h.settled();
      const pending = h.store.addDelivery(sub, '{}', new Date(now - 400 * 86_400_000));
      const DAY = 86_400_000;
      now = Date.parse('2026-01-01T00:00:00Z') + 91 * DAY;
      expect(await h.runner.purge(90 * DAY)).to.equal(1);
      expect(h.store.deliveries.has(old.id)).to.equal(false);
      expect(h.store.deliveries.has(newer.id)).to.equal(true);
      expect(h.store.deliveries.has(pending.id)).to.equal(true);
    } finally {
      h.close();
    }
  });
});
