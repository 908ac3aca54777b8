/**
 * rcv-sync: the RCV synchronizer.
 *
 * - consumes `rcv.sync` (group `rcv-sync.commands`; key = company:env:period, written by the
 *   api's outbox on POST /rcv) and synchronizes that period (`syncPeriod`: one writer per period
 *   by advisory lock, the previous snapshot kept when the SII fails);
 * - consumes the compacted `dte-status` topic (its own group `rcv-sync.status`, from the
 *   beginning, so a new instance rebuilds the sales side) and keeps our own documents' status on
 *   the sales side of the register (`applyOwnStatuses`: one statement per fetched batch, each
 *   document's latest status only);
 * - every `tickMs`, syncs the periods due: failed syncs whose backoff passed, and open periods
 *   (this month and the previous one) last synced more than `resyncMs` ago.
 */
import {
  applyOwnStatuses,
  duePeriods,
  syncPeriod,
  type RcvSource,
  type SyncDb,
  type SyncResult,
} from '@dte/reception';
import {
  PIPELINE_COMMIT_INTERVAL_MS,
  PIPELINE_TOPICS,
  type AvroConsumer,
  type Messaging,
} from '@dte/messaging';
import type { Logger } from '@dte/service-runtime';
import type { SyncSettings } from './config';

export const COMMAND_GROUP = 'rcv-sync.commands';
export const STATUS_GROUP = 'rcv-sync.status';
/** a status fetch answers at this many bytes (~1 000 records) or after its second */
const STATUS_FETCH_MIN_BYTES = 256 * 1024;

interface RcvSyncCommand {
  event_id: string;
  organization_id: string;
  company_id: string;
  sii_env: 'cert' | 'prod';
  periodo: string;
  requested_at: string;
}

interface DteStatusRecord {
  dte_id: string;
  sii_status: string;
  observed_at: string;
}

export class RcvSyncService {
  private consumers: AvroConsumer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  /** counters for the logs and the benchmark */
  readonly stats = { synced: 0, failed: 0, busy: 0, documents: 0, statuses: 0 };

  constructor(
    private readonly deps: { db: SyncDb; source: RcvSource; logger: Logger; settings: SyncSettings },
  ) {}

  async start(messaging: Messaging): Promise<void> {
    const commands = await messaging.createConsumer({
      groupId: messaging.topic(COMMAND_GROUP),
      topics: [PIPELINE_TOPICS.rcvSync],
      fromBeginning: true,
    });
    await commands.run<RcvSyncCommand>(async (msg) => {
      if (!msg.value) return;
      const v = msg.value;
      await this.sync(v.company_id, v.sii_env, v.periodo, 'command');
    });
    const status = await messaging.createConsumer({
      groupId: messaging.topic(STATUS_GROUP),
      topics: [PIPELINE_TOPICS.status],
      fromBeginning: true,
      partitionsConsumedConcurrently: 3,
      // the register's own statuses are not waited for by anybody: under load a fetch gathers up
      // to a second of them (each a statement and a commit, whose WAL flush every POST's commit
      // queues behind), and the offsets are committed once a second (the statement is idempotent)
      minBytes: STATUS_FETCH_MIN_BYTES,
      maxWaitTimeInMs: 1000,
      maxBatchSize: 5000,
      commitIntervalMs: PIPELINE_COMMIT_INTERVAL_MS,
    });
    // one statement per fetched batch, each document's latest status only (applyOwnStatuses)
    await status.runBatch<DteStatusRecord>(async (msgs) => {
      const records = msgs.flatMap((m) => (m.value ? [m.value] : []));
      const applied = await applyOwnStatuses(this.deps.db, records);
      this.stats.statuses += applied;
      // log correlation: each record with the request id of the POST that issued its document
      // (Kafka header), one debug line per record as every other consumer logs it; skipped
      // whole when debug is off, so the batch's single statement stays the only per-record cost
      if (this.deps.logger.isLevelEnabled('debug')) {
        for (const m of msgs) {
          if (!m.value) continue;
          this.deps.logger.debug(
            {
              dteId: m.value.dte_id,
              requestId: m.headers['x-request-id'],
              siiStatus: m.value.sii_status,
              records: records.length,
              applied,
            },
            'rcv-sync: dte-status consumed',
          );
        }
      }
    });
    this.consumers = [commands, status];
    this.timer = setInterval(() => {
      if (!this.ticking) this.ticking = this.tick().finally(() => (this.ticking = undefined));
    }, this.deps.settings.tickMs);
  }

  /** One sync; a failure is recorded on the period (retried by the scheduler), never thrown. */
  async sync(companyId: string, env: 'cert' | 'prod', periodo: string, why: string): Promise<SyncResult> {
    const s = this.deps.settings;
    const r = await syncPeriod(this.deps.db, this.deps.source, {
      companyId,
      env,
      periodo,
      maxAttempts: s.maxAttempts,
      backoffMs: s.backoffMs,
    });
    const log = { companyId, env, periodo, why, ...r };
    if (r.outcome === 'synced') {
      this.stats.synced += 1;
      this.stats.documents += r.documents;
      this.deps.logger.info(log, 'rcv period synced');
    } else if (r.outcome === 'failed') {
      this.stats.failed += 1;
      this.deps.logger.warn(log, 'rcv sync failed; previous snapshot kept');
    } else if (r.outcome === 'busy') {
      this.stats.busy += 1;
      this.deps.logger.info(log, 'rcv period being synced by another writer');
    } else this.deps.logger.warn(log, 'rcv sync for an unknown company');
    return r;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const due = await duePeriods(this.deps.db, new Date(), this.deps.settings.resyncMs);
      for (const p of due) {
        if (this.stopped) return;
        await this.sync(p.company_id, p.sii_env, p.periodo, 'schedule');
      }
    } catch (err) {
      this.deps.logger.error({ err }, 'rcv scheduler tick failed');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    for (const c of this.consumers) await c.disconnect();
  }
}
