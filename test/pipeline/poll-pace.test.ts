import { expect } from 'chai';
import { body, emit } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import { eventually, simAdmin, startPipeline, type Pipeline } from './harness';
import type { PollerSettings } from '@dte/sii-poller';

/**
 * Waiting for the SII costs per envelope, not per document per poll (issue 27). The simulator
 * keeps each envelope at -11 for 1.2 s and then walks it through its intermediate codes (REC,
 * SOK, FOK, …) 250 ms each before its verdict. The poller's schedule would ask every ~0.3-0.6 s
 * (fixed: first poll 200 ms, backoff 300 ms × 1.5) and publish each code it saw to every
 * document; the adaptive pace learns, from the first envelopes, when the SII gives its verdicts
 * and asks then. Counted: QueryEstUp per envelope (a wrapper on the SII client), updates of
 * each document row (a trigger in the test's schema), statuses in each document's feed.
 */
describe('sii-poller pace: polls and writes per envelope follow the SII, bounded', function () {
  this.timeout(240_000);

  const settings: Partial<PollerSettings> = {
    firstDelayMs: 200,
    backoffBaseMs: 300,
    backoffFactor: 1.5,
    backoffMaxMs: 20_000,
    maxAttempts: 40,
    paceMinMs: 100,
  };

  interface Run {
    queriesPerEnvelope: number[];
    updatesPerDoc: number[];
    pollerStatusesPerDoc: number[];
    feedsHaveNoRepeats: boolean;
  }

  /** Waves of documents, each after the last reached its verdict; the figures of the waves after the first. */
  async function run(pace: 'adaptive' | 'fixed'): Promise<Run> {
    const p: Pipeline = await startPipeline({
      sim: { registerMs: 1200, stepMs: 250 },
      poller: { ...settings, pace },
      hasta: 400,
      uploader: { maxWaitMs: 100 },
    });
    try {
      const db = p.t.db.dataSource;
      // every UPDATE of a document row, counted per document
      await db.query(`CREATE TABLE test_dte_updates (dte_id uuid NOT NULL)`);
      await db.query(`CREATE FUNCTION test_count_dte_update() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN INSERT INTO test_dte_updates VALUES (NEW.id); RETURN NEW; END $$`);
      await db.query(`CREATE TRIGGER test_count_dte_update AFTER UPDATE ON dtes
          FOR EACH ROW EXECUTE FUNCTION test_count_dte_update()`);
      // every QueryEstUp, by track id
      const queries = new Map<string, number>();
      const session = p.sii.session.bind(p.sii);
      p.sii.session = (credential) => {
        const s = session(credential);
        const ask = s.queryUploadStatus.bind(s);
        s.queryUploadStatus = (q) => {
          queries.set(q.trackId, (queries.get(q.trackId) ?? 0) + 1);
          return ask(q);
        };
        return s;
      };
      const wave = async (n: number): Promise<string[]> => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) {
          const res = await emit(p.t, p.o, body(33, p.o.rut));
          expect(res.status, res.text).to.equal(202);
          ids.push(res.body.id as string);
        }
        await eventually(
          `wave of ${n} at EPR`,
          async () => {
            const [{ left }]: { left: number }[] = await db.query(
              `SELECT count(*)::int AS left FROM dtes WHERE id = ANY($1::uuid[]) AND sii_status <> 'EPR'`,
              [ids],
            );
            return left === 0 ? true : undefined;
          },
          90_000,
        );
        return ids;
      };
      await wave(6); // the pace learns from these
      const measured: string[] = [];
      for (let i = 0; i < 4; i++) measured.push(...(await wave(6)));

      const envelopes: { track_id: string; docs: number }[] = await db.query(
        `SELECT track_id, cardinality(dte_ids) AS docs FROM sii_uploads WHERE dte_ids && $1::uuid[]`,
        [measured],
      );
      const updates: { n: number }[] = await db.query(
        `SELECT count(u.dte_id)::int AS n FROM unnest($1::uuid[]) AS d(id)
           LEFT JOIN test_dte_updates u ON u.dte_id = d.id GROUP BY d.id`,
        [measured],
      );
      const feeds: { statuses: string[] }[] = await db.query(
        `SELECT array_agg(sii_status ORDER BY observed_at, id) AS statuses FROM dte_events
          WHERE dte_id = ANY($1::uuid[]) GROUP BY dte_id`,
        [measured],
      );
      const polled: { n: number }[] = await db.query(
        `SELECT count(*)::int AS n FROM outbox WHERE topic = 'dte-status' AND payload->>'source' = 'sii-poller'
            AND message_key = ANY($1::text[]) GROUP BY message_key`,
        [measured],
      );
      // the list shows when the SII was last asked, even when that poll wrote nothing on the row
      const listed = await call(p.t.url, 'GET', `/dtes?limit=5&sii_status=EPR`, { key: p.o.key });
      expect(listed.status).to.equal(200);
      for (const r of listed.body.data as { sii_last_polled: string | null }[])
        expect(r.sii_last_polled).to.be.a('string');
      expect(feeds).to.have.length(measured.length);
      expect(polled).to.have.length(measured.length);
      return {
        queriesPerEnvelope: envelopes.map((e) => queries.get(e.track_id) ?? 0),
        updatesPerDoc: updates.map((u) => u.n),
        pollerStatusesPerDoc: polled.map((x) => x.n),
        feedsHaveNoRepeats: feeds.every((f) => new Set(f.statuses).size === f.statuses.length),
      };
    } finally {
      await p.close();
    }
  }

  const max = (xs: number[]) => Math.max(...xs);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

  it('adaptive: after the first envelopes, about one QueryEstUp per envelope and one poller write per document; the fixed schedule, one per intermediate code', async () => {
    const adaptive = await run('adaptive');
    const fixed = await run('fixed');
    // every document reached EPR (run() waits for it) with each status in its feed once
    expect(adaptive.feedsHaveNoRepeats && fixed.feedsHaveNoRepeats).to.equal(true);
    // the fixed schedule asks several times per envelope and publishes what it sees in between
    expect(mean(fixed.queriesPerEnvelope), `fixed ${fixed.queriesPerEnvelope}`).to.be.at.least(3);
    expect(mean(fixed.pollerStatusesPerDoc), `fixed ${fixed.pollerStatusesPerDoc}`).to.be.at.least(2);
    // the adaptive pace: bounded per envelope, whatever the number of intermediate codes
    expect(max(adaptive.queriesPerEnvelope), `adaptive ${adaptive.queriesPerEnvelope}`).to.be.at.most(3);
    expect(mean(adaptive.queriesPerEnvelope), `adaptive ${adaptive.queriesPerEnvelope}`).to.be.at.most(1.6);
    expect(max(adaptive.pollerStatusesPerDoc), `adaptive ${adaptive.pollerStatusesPerDoc}`).to.be.at.most(2);
    expect(mean(adaptive.pollerStatusesPerDoc)).to.be.at.most(1.4);
    // document row updates: signer, uploader, poller (one per status it publishes), nothing per
    // poll that changed nothing; the projector's late observations at most once more
    expect(max(adaptive.updatesPerDoc), `adaptive ${adaptive.updatesPerDoc}`).to.be.at.most(5);
    expect(mean(adaptive.updatesPerDoc)).to.be.below(mean(fixed.updatesPerDoc));
  });

  it('a stalled SII (no verdict, slow answers) holds the documents in the schedule: polls grow with the log of the wait, at most POLL_CONCURRENCY in flight, nothing per document in memory', async () => {
    const concurrency = 2;
    const p = await startPipeline({
      sim: { registerMs: 300, stepMs: 100 },
      poller: { ...settings, pace: 'adaptive', concurrency, maxAttempts: 1000 },
      hasta: 100,
      uploader: { maxWaitMs: 50, maxDocs: 2 },
    });
    try {
      const db = p.t.db.dataSource;
      let inFlight = 0;
      let maxInFlight = 0;
      const queries = new Map<string, number>();
      const session = p.sii.session.bind(p.sii);
      p.sii.session = (credential) => {
        const s = session(credential);
        const ask = s.queryUploadStatus.bind(s);
        s.queryUploadStatus = async (q) => {
          queries.set(q.trackId, (queries.get(q.trackId) ?? 0) + 1);
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          try {
            return await ask(q);
          } finally {
            inFlight -= 1;
          }
        };
        return s;
      };
      // six envelopes the SII never decides, whose status queries it answers slowly (400 ms each)
      await simAdmin(p.t, 'POST', '/admin/triggers', {
        kind: 'delay',
        operation: 'getEstUp',
        ms: 400,
        times: 1000,
      });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        await simAdmin(p.t, 'POST', '/admin/triggers', { kind: 'stuck', env: 'cert' });
        const res = await emit(p.t, p.o, body(33, p.o.rut));
        expect(res.status, res.text).to.equal(202);
        ids.push(res.body.id as string);
        await eventually('its upload', async () => {
          const [r]: { track_id: string | null }[] = await db.query(
            'SELECT track_id FROM dtes WHERE id = $1',
            [res.body.id],
          );
          return r?.track_id ?? undefined;
        });
      }
      const waitMs = 8000;
      await new Promise((r) => setTimeout(r, waitMs));
      const rows: { sii_status: string }[] = await db.query(
        'SELECT sii_status FROM dtes WHERE id = ANY($1::uuid[])',
        [ids],
      );
      // held: every document waits at -11 in the durable schedule, none lost, none decided
      expect(rows.map((r) => r.sii_status)).to.deep.equal(ids.map(() => '-11'));
      const [{ active }]: { active: number }[] = await db.query(
        `SELECT count(*)::int AS active FROM sii_polls WHERE state = 'active' AND dte_ids && $1::uuid[]`,
        [ids],
      );
      expect(active).to.equal(6);
      // bounded: never more than POLL_CONCURRENCY status queries at once, however many wait
      expect(maxInFlight, 'status queries in flight').to.be.at.most(concurrency);
      // and the queries per envelope grow with the logarithm of its wait (age × 1.5 per poll from
      // the first delay, 200 ms): ~8-10 polls in 8-12 s, where a poll every POLL_PACE_MIN_MS
      // (100 ms) would have asked ~100 times
      const perEnvelope = [...queries.values()];
      expect(perEnvelope.length).to.equal(6);
      for (const n of perEnvelope) expect(n, `queries ${perEnvelope}`).to.be.within(3, 14);
      // the poller keeps nothing per waiting document in memory (the schedule is the table; its
      // request-id cache is capped): its pace holds one entry per channel and environment
      expect((p.poller.pace as unknown as { expected: Map<string, number> }).expected.size).to.be.at.most(1);
    } finally {
      await p.close();
    }
  });
});
