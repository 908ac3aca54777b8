/**
 * The projector: consumes the compacted topic dte-status and keeps the read model (the status
 * columns of `dtes`) and the events feed (`dte_events`) in PostgreSQL.
 *
 * Each record is applied in one transaction that (1) claims its event_id in processed_events
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
import { claimEvent } from '@dte/database';
import { PIPELINE_TOPICS, type AvroConsumer, type Messaging } from '@dte/messaging';
import type { Logger } from '@dte/service-runtime';
import { shouldApply } from '@dte/status';
import type { DataSource } from 'typeorm';
import type { DteStatusRecord } from '../dtes/status-record';
import { observeTransition } from './stage-metrics';

export const PROJECTOR_CONSUMER = 'api.projector';

export type ApplyResult = 'duplicate' | 'unknown_document' | 'applied' | 'not_applied';

/** Applies one dte-status record (exported for the consumer and for direct use). */
export async function applyStatusRecord(db: DataSource, rec: DteStatusRecord): Promise<ApplyResult> {
  const observedAt = new Date(rec.observed_at);
  if (Number.isNaN(observedAt.getTime()))
    throw new Error(`dte-status ${rec.event_id}: bad observed_at ${rec.observed_at}`);
  return db.transaction(async (m) => {
    if (!(await claimEvent(m, PROJECTOR_CONSUMER, rec.event_id))) return 'duplicate';
    const rows: { sii_status: string; observed_at: Date }[] = await m.query(
      'SELECT sii_status, observed_at FROM dtes WHERE id = $1 FOR UPDATE',
      [rec.dte_id],
    );
    const current = rows[0];
    if (!current) return 'unknown_document';
    const apply = shouldApply(
      { sii_status: current.sii_status, observed_at: new Date(current.observed_at).toISOString() },
      { sii_status: rec.sii_status, observed_at: observedAt.toISOString() },
    );
    // history: what moved the document, and older observations arriving late (they fit in the
    // chronology); not a non-terminal echo observed after the document had moved past it
    if (apply || observedAt.getTime() < new Date(current.observed_at).getTime()) {
      await m.query(
        `INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
         SELECT $1, $2, $3, $4, $5, $6, $7
          WHERE NOT EXISTS (SELECT 1 FROM dte_events WHERE event_id = $2)
            AND $3 IS DISTINCT FROM (
              SELECT sii_status FROM dte_events WHERE dte_id = $1 AND observed_at <= $7
               ORDER BY observed_at DESC, id DESC LIMIT 1)
            AND $3 IS DISTINCT FROM (
              SELECT sii_status FROM dte_events WHERE dte_id = $1 AND observed_at > $7
               ORDER BY observed_at, id LIMIT 1)`,
        [rec.dte_id, rec.event_id, rec.sii_status, rec.sii_glosa, rec.track_id, rec.source, observedAt],
      );
    }
    if (apply) {
      await m.query(
        `UPDATE dtes SET sii_status = $2, sii_glosa = $3, observed_at = $4, track_id = COALESCE(track_id, $5)
          WHERE id = $1`,
        [rec.dte_id, rec.sii_status, rec.sii_glosa, observedAt, rec.track_id],
      );
    } else if (rec.track_id) {
      await m.query('UPDATE dtes SET track_id = $2 WHERE id = $1 AND track_id IS NULL', [
        rec.dte_id,
        rec.track_id,
      ]);
    }
    if (apply) observeTransition(current, { sii_status: rec.sii_status, observed_at: observedAt });
    return apply ? 'applied' : 'not_applied';
  });
}

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
  });
  await consumer.run<DteStatusRecord>(async (msg) => {
    if (msg.value === null) return;
    const result = await applyStatusRecord(opts.dataSource, msg.value);
    if (result === 'unknown_document')
      opts.logger.warn(
        { dteId: msg.value.dte_id, eventId: msg.value.event_id },
        'projector: unknown document',
      );
  });
  return {
    consumer,
    async stop() {
      await consumer.disconnect();
    },
  };
}
