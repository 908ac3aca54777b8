/**
 * The outbox relay: publishes `outbox` rows to Kafka, at least once, in id order.
 *
 * - One active relay: each relay instance holds a dedicated connection and takes the session
 *   advisory lock `outbox-relay:<schema>` with pg_try_advisory_lock; only the holder publishes.
 *   The others retry the lock every `lockRetryMs` (the lock goes when its connection dies).
 * - Unpublished rows are `published_at IS NULL` (never `id > last_id`: ids commit out of order,
 *   a late-committing lower id would be skipped). Up to `batchSize` are read in id order, sent in
 *   ONE produce request whatever their topics (acks = all, idempotent producer; a topic's
 *   messages keep their id order), then marked published: by the statement that reads the next
 *   round when more rows are waiting (it comes at once: one round trip instead of two), else by
 *   an UPDATE of their own before the relay sleeps. A crash between send and mark re-sends them:
 *   consumers dedupe on the payload's event_id.
 * - LISTEN outbox (a trigger NOTIFYs on insert) only wakes the loop (after `lingerMs`, so rows
 *   committed together share a round); it polls every `pollMs` anyway, so a lost notification
 *   only delays. The trigger notifies only while the relay sleeps (its row in
 *   `outbox_relay_sleeping`, written before its last look at the outbox, deleted when it wakes):
 *   a NOTIFYing commit holds PostgreSQL's notify lock through its WAL flush, so every writer's
 *   commit used to wait for the others' (migration NotifyOnlyListeners1796800000000).
 * - A row whose payload its Avro schema refuses can never be sent: it is set aside (failed_at,
 *   last_error, an error log) so it does not block the rows behind it.
 * - A failed send leaves the rows unpublished (attempts + 1), drops the producer (a new one is
 *   made for the next try) and backs off up to `maxBackoffMs`.
 */
import type { Logger } from '@dte/service-runtime';
import { PROCESSED_EVENTS_RETAIN_DAYS_DEFAULT, purgeProcessedEvents } from '@dte/database';
import type { AvroProducer, Messaging } from '@dte/messaging';
import type { DataSource, QueryRunner } from 'typeorm';
import { purgePublishedOutbox } from './purge';

export interface RelayOptions {
  dataSource: DataSource;
  messaging: Messaging;
  logger: Logger;
  /** fallback polling period (ms) */
  pollMs?: number;
  /**
   * after a NOTIFY wakes it, the relay waits this long (ms) before reading, so the rows committed
   * meanwhile share one produce request and one statement (20 by default; 0 reads at once).
   * Measured under the bench at ~110 docs/s: 2 ms made 562 rounds for 1000 documents, 20 ms
   * 245 (every round is a produce request, a statement, and smaller batches downstream), for at
   * most 20 ms more per hop
   */
  lingerMs?: number;
  batchSize?: number;
  lockRetryMs?: number;
  maxBackoffMs?: number;
  /** purge rows published longer ago than this (ms; a day by default; 0 keeps them): see ./purge */
  retainPublishedMs?: number;
  /**
   * purge the consumers' claims (processed_events) older than this (ms; 30 days by default; 0
   * keeps them): must exceed the topics' retention and the consumer groups' offsets retention
   * (@dte/database purgeProcessedEvents). The active relay is the one process per database that
   * does this housekeeping.
   */
  retainProcessedEventsMs?: number;
}

interface OutboxRow {
  id: string;
  topic: string;
  schema: string;
  message_key: string | null;
  payload: Record<string, unknown>;
  headers: Record<string, string> | null;
}

interface PgNotifyingClient {
  on(event: 'notification', fn: () => void): void;
  removeListener(event: 'notification', fn: () => void): void;
}

export interface OutboxRelay {
  /** true while this instance holds the lock */
  isActive(): boolean;
  /** published rows so far by this instance */
  published(): number;
  stop(): Promise<void>;
}

/** the active relay's row in outbox_relay_sleeping (one active relay per schema: the advisory lock) */
const RELAY_NAME = 'active';

export async function startOutboxRelay(opts: RelayOptions): Promise<OutboxRelay> {
  const pollMs = opts.pollMs ?? 1000;
  const batchSize = opts.batchSize ?? 500;
  const lingerMs = opts.lingerMs ?? 20;
  const lockRetryMs = opts.lockRetryMs ?? 2000;
  const maxBackoffMs = opts.maxBackoffMs ?? 10000;
  const retainMs = opts.retainPublishedMs ?? 24 * 3600 * 1000;
  const retainClaimsMs =
    opts.retainProcessedEventsMs ?? PROCESSED_EVENTS_RETAIN_DAYS_DEFAULT * 24 * 3600 * 1000;
  const log = opts.logger;
  let stopped = false;
  let active = false;
  let count = 0;
  let wake: (() => void) | undefined;
  // a notification that arrives while a batch is being published must not be lost: it is kept
  // until the next sleep, which then returns at once
  let notified = false;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (notified || stopped) {
        notified = false;
        resolve();
        return;
      }
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wake = undefined;
        notified = false;
        resolve();
      }
      wake = done;
    });
  const onNotify = () => {
    notified = true;
    wake?.();
  };

  let producer: AvroProducer | undefined;
  let runner: QueryRunner | undefined;
  let lastPurge = 0;

  const releaseRunner = async () => {
    const r = runner;
    runner = undefined;
    active = false;
    if (!r) return;
    try {
      const client = (await r.connect()) as PgNotifyingClient;
      client.removeListener('notification', onNotify);
      await r.query('UNLISTEN outbox');
      await r.query('SELECT pg_advisory_unlock_all()');
    } catch {
      // the connection is gone: so is the lock
    }
    await r.release().catch(() => undefined);
  };

  const tryLock = async (): Promise<boolean> => {
    if (!runner) {
      runner = opts.dataSource.createQueryRunner();
      const client = (await runner.connect()) as PgNotifyingClient;
      client.on('notification', onNotify);
      await runner.query('LISTEN outbox');
    }
    const rows: { ok: boolean }[] = await runner.query(
      `SELECT pg_try_advisory_lock(hashtext('outbox-relay:' || current_schema())) AS ok`,
    );
    return rows[0]?.ok === true;
  };

  /** ids sent and acknowledged whose published_at the next read sets (see publishBatch) */
  let unmarked: string[] = [];
  const markPublished = async () => {
    if (unmarked.length === 0) return;
    await runner!.query('UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])', [unmarked]);
    unmarked = [];
  };

  const publishBatch = async (): Promise<number> => {
    // the read also marks the previous round's rows published (ONE round trip for both)
    const rows: OutboxRow[] = await runner!.query(
      `WITH marked AS (UPDATE outbox SET published_at = now() WHERE id = ANY($2::bigint[]))
       SELECT id, topic, schema, message_key, payload, headers FROM outbox
        WHERE published_at IS NULL AND failed_at IS NULL AND NOT (id = ANY($2::bigint[]))
        ORDER BY id LIMIT $1`,
      [batchSize, unmarked],
    );
    unmarked = [];
    if (rows.length === 0) return 0;
    producer ??= await opts.messaging.createProducer();
    // ONE produce request for the whole round (messages of a topic keep their id order), then
    // ONE statement marks every row
    const runs = new Map<string, OutboxRow[]>();
    for (const r of rows) {
      const k = `${r.topic}\u0000${r.schema}`;
      const run = runs.get(k) ?? [];
      run.push(r);
      runs.set(k, run);
    }
    try {
      await producer.sendBatch(
        [...runs.values()].map((run) => ({
          topic: run[0].topic,
          schema: run[0].schema,
          messages: run.map((r) => ({
            key: r.message_key,
            value: r.payload,
            headers: r.headers ?? undefined,
          })),
        })),
      );
    } catch (err) {
      let poison = false;
      for (const run of runs.values()) if (await quarantinePoison(run, err)) poison = true;
      if (poison) {
        notified = true; // the rest goes out on the next pass, at once
        return 0;
      }
      throw err;
    }
    unmarked = rows.map((r) => r.id);
    count += rows.length;
    // more rows are waiting (a full round, or a NOTIFY came meanwhile): the next read, which
    // comes at once, marks these; otherwise they are marked now, before the relay sleeps
    if (rows.length < batchSize && !notified) await markPublished();
    return rows.length;
  };

  /**
   * After a failed send that is not a broker error: the rows of the run whose payload the
   * topic's schema refuses are set aside (failed_at, last_error, logged as errors). True when at
   * least one was; a registry that does not answer is not the rows' fault (false: retry).
   */
  const quarantinePoison = async (run: OutboxRow[], err: unknown): Promise<boolean> => {
    if ((err as Error)?.name?.startsWith('KafkaJS')) return false;
    const schemas = opts.messaging.schemas;
    let id: number;
    try {
      id = await schemas.idFor(opts.messaging.topic(run[0].topic), run[0].schema);
    } catch {
      return false;
    }
    let found = false;
    for (const row of run) {
      try {
        await schemas.encode(id, row.payload);
      } catch (e) {
        found = true;
        const why = (e as Error).message?.slice(0, 500) ?? String(e);
        log.error(
          { outboxId: row.id, topic: row.topic, err: e },
          'outbox relay: payload refused by its schema; set aside',
        );
        await runner!.query('UPDATE outbox SET failed_at = now(), last_error = $2 WHERE id = $1', [
          row.id,
          why,
        ]);
      }
    }
    return found;
  };

  /**
   * Sleeps until a NOTIFY or `pollMs`: the writers notify only while the relay's row is in
   * outbox_relay_sleeping, so it is written first, then the outbox is looked at once more (a row
   * committed by then is read now; a writer that saw the row notifies), and it is deleted on
   * waking. A writer whose trigger ran before the row was there and that commits after that look
   * is neither read nor heard: its row waits for the poll, as a lost notification always did. The
   * row's statements touch an UNLOGGED table: no WAL flush.
   */
  const sleepUntilRows = async () => {
    await runner!.query(
      `INSERT INTO outbox_relay_sleeping (relay) VALUES ($1) ON CONFLICT (relay) DO NOTHING`,
      [RELAY_NAME],
    );
    const [{ waiting }]: { waiting: boolean }[] = await runner!.query(
      `SELECT EXISTS (SELECT 1 FROM outbox WHERE published_at IS NULL AND failed_at IS NULL) AS waiting`,
    );
    if (!waiting) await sleep(pollMs);
    await runner!.query(`DELETE FROM outbox_relay_sleeping`);
  };

  const loop = async () => {
    let backoff = pollMs;
    while (!stopped) {
      try {
        if (!active) {
          active = await tryLock();
          if (!active) {
            await sleep(lockRetryMs);
            continue;
          }
          log.info('outbox relay: active (advisory lock held)');
        }
        const n = await publishBatch();
        backoff = pollMs;
        if ((retainMs > 0 || retainClaimsMs > 0) && Date.now() - lastPurge > 60_000) {
          lastPurge = Date.now();
          if (retainMs > 0) {
            const purged = await purgePublishedOutbox(runner!, retainMs);
            if (purged > 0) log.info({ purged }, 'outbox: rows published past their retention purged');
          }
          if (retainClaimsMs > 0) {
            const purged = await purgeProcessedEvents(runner!, retainClaimsMs);
            if (purged > 0) log.info({ purged }, 'processed_events: claims past their retention purged');
          }
        }
        if (n < batchSize) {
          await sleepUntilRows();
          if (lingerMs > 0 && !stopped) await new Promise((r) => setTimeout(r, lingerMs));
        }
      } catch (err) {
        if (stopped) break;
        log.warn({ err }, 'outbox relay: publish failed; will retry');
        // a producer that lost its broker (restart, kill) may stay unusable: start a fresh one
        const broken = producer;
        producer = undefined;
        await broken?.disconnect().catch(() => undefined);
        try {
          if (runner && active)
            await runner.query(
              `UPDATE outbox SET attempts = attempts + 1
                WHERE id IN (SELECT id FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1)`,
              [batchSize],
            );
        } catch {
          // the connection failed: start over with a new one (and a new lock attempt)
          await releaseRunner();
        }
        await sleep(backoff);
        backoff = Math.min(backoff * 2, maxBackoffMs);
      }
    }
  };
  const done = loop();

  return {
    isActive: () => active,
    published: () => count,
    async stop() {
      stopped = true;
      wake?.();
      await done;
      if (active) await markPublished().catch(() => undefined);
      await releaseRunner();
      await producer?.disconnect().catch(() => undefined);
    },
  };
}
