/**
 * The projector: consumes the compacted topic dte-status and keeps the read model (the status
 * columns of `dtes`) and the events feed (`dte_events`) in PostgreSQL.
 *
 * Records are applied a fetched batch at a time, in ONE transaction per batch (applyStatusRecords),
 * with the outcome of applying them one by one in order. The api's own `queued` records and the
 * records a worker applied itself (header `x-status-applied-from`: the signer's `signed`, the
 * uploader's `sending`, the poller's latest answer) are skipped: the statement that wrote them
 * wrote their feed rows and status (writtenWithItsDocument). Each other record (1) claims its
 * event_id in processed_events
 * (consumer `api.projector`): a redelivery or replay finds it and changes nothing; (2) locks the
 * document row; (3) appends the change to the feed when it moves the
 * document, or when it is older than the document's current status (a late record of real
 * history), unless the feed already holds it (same event_id) or it would sit next to an event of the same
 * status (a status seen again, e.g. re-published by a worker that restarted, is not a
 * transition): the feed is the chronological history of transitions even when records arrive
 * out of order or twice under new event ids, without echoes observed after a verdict; (4) moves the row's status only when @dte/status
 * `shouldApply` allows it (never backwards, terminal is final), taking the track id when the row
 * has none. Tombstones (null values) and records of documents this database does not hold are
 * acknowledged and skipped, with a log line for the latter.
 */
import {
  PIPELINE_COMMIT_INTERVAL_MS,
  PIPELINE_TOPICS,
  type AvroConsumer,
  type Messaging,
} from '@dte/messaging';
import type { Logger } from '@dte/service-runtime';
import { shouldApply } from '@dte/status';
import { SimpleClient, executeSql, statusAppliedFrom, type PreparedSql } from '@dte/database';
import type { DataSource } from 'typeorm';
import { writtenWithItsDocument, type DteStatusRecord } from '../status-record';
import { observeTransition } from './stage-metrics';

export const PROJECTOR_CONSUMER = 'api.projector';

export type ApplyResult = 'duplicate' | 'unknown_document' | 'applied' | 'not_applied';

/** Applies one dte-status record (exported for direct use): a batch of one. */
export async function applyStatusRecord(db: DataSource, rec: DteStatusRecord): Promise<ApplyResult> {
  return (await applyStatusRecords(db, [rec]))[0]!;
}

interface DocState {
  sii_status: string;
  sii_glosa: string | null;
  observed_at: Date;
  track_id: string | null;
  dirty: boolean;
}

interface FeedEvent {
  id: number;
  event_id: string;
  sii_status: string;
  observedMs: number;
}

/**
 * Applies dte-status records in ONE transaction, with the same outcome as applying them one by
 * one in order, in three statements: the multi-row claim of the event ids with the locking read
 * (id order) of the claimed documents, the read of their feed, then (after the decisions, taken
 * in memory record by record, so several records of one document in a batch see each other) the
 * multi-row insert into the feed with the multi-row update of the read model. Returns each
 * record's result, in order.
 */
export async function applyStatusRecords(
  db: DataSource,
  recs: DteStatusRecord[],
  headers?: (Record<string, string> | undefined)[],
): Promise<ApplyResult[]> {
  // records applied by the statement that wrote them (the api's `queued`; a worker's, whose header
  // tells what it replaced, for the stage metrics): no claim, no lock, no feed read for them (on
  // the happy path every record of a document but a poll's earlier answer)
  const from = recs.map((_, i) => statusAppliedFrom(headers?.[i]));
  const written = recs.map((r, i) => writtenWithItsDocument(r, from[i] ?? null));
  if (written.some(Boolean)) {
    const applied = await applyStatusRecords(
      db,
      recs.filter((_, i) => !written[i]),
      headers?.filter((_, i) => !written[i]),
    );
    let k = 0;
    return recs.map((r, i) => {
      if (!written[i]) return applied[k++]!;
      const replaced = from[i];
      if (replaced)
        observeTransition(replaced, { sii_status: r.sii_status, observed_at: new Date(r.observed_at) });
      return 'not_applied';
    });
  }
  if (recs.length === 0) return [];
  const observed = recs.map((rec) => {
    const d = new Date(rec.observed_at);
    if (Number.isNaN(d.getTime()))
      throw new Error(`dte-status ${rec.event_id}: bad observed_at ${rec.observed_at}`);
    return d;
  });
  // the transaction is driven by hand on one pooled connection so that BEGIN travels with the
  // claim and COMMIT with the write: 3 round trips per batch (claim, feed, write), not 5
  const tx = await SimpleClient.connect(db);
  let failed = true;
  try {
    // ONE statement claims the event ids and locks (in id order) the documents of the records
    // it claimed: the claimed event ids come back as rows without a document id
    await tx.prepare(CLAIM);
    await tx.prepare(WRITE);
    const [, claimRows] = await tx.run<
      Omit<DocState, 'dirty'> & { id: string | null; claimed: string | null }
    >(
      CLAIM.sql,
      'BEGIN',
      executeSql(CLAIM, [PROJECTOR_CONSUMER, recs.map((r) => r.event_id), recs.map((r) => r.dte_id)]),
    );
    const claimed = new Set<string>();
    const docs = new Map<string, DocState>();
    for (const r of claimRows!) {
      if (r.claimed !== null) claimed.add(r.claimed);
      else if (r.id !== null)
        docs.set(r.id, {
          sii_status: r.sii_status,
          sii_glosa: r.sii_glosa,
          observed_at: new Date(r.observed_at),
          track_id: r.track_id,
          dirty: false,
        });
    }
    const feed = new Map<string, FeedEvent[]>();
    const feedIds = new Set<string>();
    let nextId = 0;
    if (docs.size > 0) {
      // the feed is read after the locks are held (a statement of its own, so its snapshot
      // holds what a projector transaction that held a lock before us committed), document by
      // document through dte_events_dte_idx (OFFSET 0 keeps the planner from turning the lateral
      // read into a hash join): `dte_id = ANY(…)` let a table without statistics (a new schema,
      // before autovacuum's first ANALYZE) be read whole for every batch
      const events: {
        id: string;
        dte_id: string;
        event_id: string;
        sii_status: string;
        observed_at: Date;
      }[] = await tx.query(
        `SELECT e.id, e.dte_id, e.event_id, e.sii_status, e.observed_at
           FROM unnest($1::uuid[]) AS d(id)
           CROSS JOIN LATERAL (SELECT id, dte_id, event_id, sii_status, observed_at FROM dte_events
                                WHERE dte_id = d.id OFFSET 0) AS e`,
        [[...docs.keys()]],
        'projector_feed',
      );
      for (const e of events) {
        const list = feed.get(e.dte_id) ?? [];
        list.push({
          id: Number(e.id),
          event_id: e.event_id,
          sii_status: e.sii_status,
          observedMs: new Date(e.observed_at).getTime(),
        });
        feed.set(e.dte_id, list);
        feedIds.add(e.event_id);
        nextId = Math.max(nextId, Number(e.id));
      }
    }
    const inserts: { rec: DteStatusRecord; at: Date }[] = [];
    // transitions applied, for the stage metrics (from, to)
    const transitions: [
      { sii_status: string; observed_at: Date },
      { sii_status: string; observed_at: Date },
    ][] = [];
    const results = recs.map((rec, i): ApplyResult => {
      // a duplicate within the batch is claimed once: its first occurrence
      if (!claimed.delete(rec.event_id)) return 'duplicate';
      const current = docs.get(rec.dte_id);
      if (!current) return 'unknown_document';
      const at = observed[i]!;
      const apply = shouldApply(
        { sii_status: current.sii_status, observed_at: current.observed_at.toISOString() },
        { sii_status: rec.sii_status, observed_at: at.toISOString() },
      );
      // history: what moved the document, and older observations arriving late (they fit in the
      // chronology); not a non-terminal echo observed after the document had moved past it; never
      // next to an event of the same status, never an event the feed holds already
      if ((apply || at.getTime() < current.observed_at.getTime()) && !feedIds.has(rec.event_id)) {
        const list = feed.get(rec.dte_id) ?? [];
        let before: FeedEvent | undefined;
        let after: FeedEvent | undefined;
        for (const e of list) {
          if (e.observedMs <= at.getTime()) {
            if (
              !before ||
              e.observedMs > before.observedMs ||
              (e.observedMs === before.observedMs && e.id > before.id)
            )
              before = e;
          } else if (
            !after ||
            e.observedMs < after.observedMs ||
            (e.observedMs === after.observedMs && e.id < after.id)
          )
            after = e;
        }
        if (before?.sii_status !== rec.sii_status && after?.sii_status !== rec.sii_status) {
          list.push({
            id: ++nextId,
            event_id: rec.event_id,
            sii_status: rec.sii_status,
            observedMs: at.getTime(),
          });
          feed.set(rec.dte_id, list);
          feedIds.add(rec.event_id);
          inserts.push({ rec, at });
        }
      }
      if (apply) {
        transitions.push([
          { sii_status: current.sii_status, observed_at: current.observed_at },
          { sii_status: rec.sii_status, observed_at: at },
        ]);
        current.sii_status = rec.sii_status;
        current.sii_glosa = rec.sii_glosa;
        current.observed_at = at;
        current.track_id = current.track_id ?? rec.track_id;
        current.dirty = true;
      } else if (rec.track_id && current.track_id === null) {
        current.track_id = rec.track_id;
        current.dirty = true;
      }
      return apply ? 'applied' : 'not_applied';
    });
    const dirty = [...docs].filter(([, d]) => d.dirty);
    const iso = (d: Date) => d.toISOString();
    if (inserts.length > 0 || dirty.length > 0)
      // the feed's new events and the read model's changes in ONE statement, with the COMMIT
      await tx.run(
        WRITE.sql,
        executeSql(WRITE, [
          inserts.map((x) => x.rec.dte_id),
          inserts.map((x) => x.rec.event_id),
          inserts.map((x) => x.rec.sii_status),
          inserts.map((x) => x.rec.sii_glosa),
          inserts.map((x) => x.rec.track_id),
          inserts.map((x) => x.rec.source),
          inserts.map((x) => iso(x.at)),
          dirty.map(([id]) => id),
          dirty.map(([, d]) => d.sii_status),
          dirty.map(([, d]) => d.sii_glosa),
          dirty.map(([, d]) => iso(d.observed_at)),
          dirty.map(([, d]) => d.track_id),
        ]),
        'COMMIT',
      );
    else await tx.run('COMMIT', 'COMMIT');
    failed = false;
    for (const [from, to] of transitions) observeTransition(from, to);
    return results;
  } finally {
    await tx.release(failed);
  }
}

/** The claim of a batch's event ids with the locking read of their documents (see above). */
const CLAIM: PreparedSql = {
  name: 'projector_claim',
  types: ['text', 'text[]', 'uuid[]'],
  sql: `WITH claimed AS (
   INSERT INTO processed_events (consumer, event_id) SELECT $1, e FROM unnest($2::text[]) AS e
   ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id
 ), locked AS MATERIALIZED (
   SELECT id, sii_status, sii_glosa, observed_at, track_id FROM dtes
    WHERE id IN (SELECT v.d FROM unnest($2::text[], $3::uuid[]) AS v(e, d)
                   JOIN claimed ON claimed.event_id = v.e)
    ORDER BY id FOR UPDATE
 )
 SELECT NULL::uuid AS id, NULL AS sii_status, NULL AS sii_glosa, NULL::timestamptz AS observed_at,
        NULL AS track_id, event_id AS claimed FROM claimed
 UNION ALL
 SELECT id, sii_status, sii_glosa, observed_at, track_id, NULL FROM locked`,
};

/** The feed's new events and the read model's changes (see above). */
const WRITE: PreparedSql = {
  name: 'projector_write',
  types: [
    'uuid[]',
    'text[]',
    'text[]',
    'text[]',
    'text[]',
    'text[]',
    'timestamptz[]',
    'uuid[]',
    'text[]',
    'text[]',
    'timestamptz[]',
    'text[]',
  ],
  sql: `WITH feed AS (
   INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
   SELECT d, e, s, g, t, src, o
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
          WITH ORDINALITY AS v(d, e, s, g, t, src, o, n)
    ORDER BY n
   ON CONFLICT (event_id) DO NOTHING
 )
 UPDATE dtes SET sii_status = v.s, sii_glosa = v.g, observed_at = v.o, track_id = v.t
   FROM unnest($8::uuid[], $9::text[], $10::text[], $11::timestamptz[], $12::text[]) AS v(id, s, g, o, t)
  WHERE dtes.id = v.id`,
};

export interface Projector {
  consumer: AvroConsumer;
  stop(): Promise<void>;
}

/**
 * Starts consuming dte-status (group `<prefix>api.projector`, from the beginning for a new
 * group: the compacted topic holds every document's latest status).
 */
export async function startProjector(opts: {
  dataSource: DataSource;
  messaging: Messaging;
  logger: Logger;
  partitionsConsumedConcurrently?: number;
}): Promise<Projector> {
  const consumer = await opts.messaging.createConsumer({
    groupId: opts.messaging.topic(PROJECTOR_CONSUMER),
    topics: [PIPELINE_TOPICS.status],
    fromBeginning: true,
    partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 3,
    // a fetch waits up to 200 ms for 64 KiB, so a batch (one transaction) holds more records: a
    // batch costs ~1.8 ms of CPU whatever its size (scripts/bench/projector-cpu.ts: 0.80 ms of
    // PostgreSQL per document in batches of 10 records, 0.35 in batches of 100), for at most
    // 150 ms more before the read model shows a status (was 50 ms for 16 KiB)
    minBytes: 64 * 1024,
    maxWaitTimeInMs: 200,
    // a redelivered record finds its claim (processed_events)
    commitIntervalMs: PIPELINE_COMMIT_INTERVAL_MS,
  });
  // one transaction per fetched batch of a partition (records of one document share a partition)
  await consumer.runBatch<DteStatusRecord>(async (msgs) => {
    const live = msgs.filter((msg) => msg.value !== null);
    const recs = live.map((msg) => msg.value as DteStatusRecord);
    const results = await applyStatusRecords(
      opts.dataSource,
      recs,
      live.map((msg) => msg.headers),
    );
    results.forEach((result, i) => {
      if (result === 'unknown_document')
        opts.logger.warn(
          { dteId: recs[i]!.dte_id, eventId: recs[i]!.event_id },
          'projector: unknown document',
        );
    });
  });
  return {
    consumer,
    async stop() {
      await consumer.disconnect();
    },
  };
}
