/**
 * The sii-poller: a durable poll schedule in PostgreSQL (`sii_polls`).
 *
 * - dte.uploaded → one `active` row per upload (claim of the event id + insert in one
 *   transaction; a replay changes nothing), first poll when the SII has lately been answering
 *   verdicts (pace.ts; at least firstDelayMs after the upload). A refresh record
 *   (refresh = true, from POST /dtes/:id/refresh-status through the api's outbox) re-arms the
 *   row: active, attempts 0, due now, with the certificate the api chose, for the refreshed
 *   documents (added to those already watched when the row is still active).
 * - The loop takes due rows (FOR UPDATE SKIP LOCKED; next_poll_at is pushed ahead by a lease and
 *   `version` grows, in the same statement), asks QueryEstUp and records the answer in one
 *   transaction guarded by that version, with its dte-status messages in the outbox:
 *     -11 and intermediate codes (REC, SOK, CRT, FOK, PDR, PRD, unknown ones as they are):
 *       published for each document when the code differs from the last one published;
 *       the next poll as the pace says (pace.ts: at the SII's expected verdict time, or
 *       after the envelope's age × a factor, never later than backoffDelay(attempts)). A poll
 *       that publishes nothing writes only the schedule's row, not the documents';
 *     EPR: from the counts, every document EPR / RCH / RPR when they leave no doubt, else
 *       QueryEstDte per document;
 *     RFR, RCT, RSC: that verdict for every document;
 *     no permission (-3, -6, -10, -13, or a login the SII refuses): sin_permiso_sii;
 *     SII failures: nothing published, polled again;
 *   after maxAttempts polls without a verdict: `stuck`.
 * - Survives restarts: the schedule is the table; a process that dies mid-poll leaves its
 *   rows due again when the lease ends, and a result recorded after a re-arm is discarded.
 */
import { pollBoletaUpload, uploadChannel } from './boleta-status';
import {
  returnedRows,
  statusChangeEntry,
  statusDocRef,
  outboxInsertSql,
  ownStatusWriteSql,
  RequestIds,
  type DteStatusValue,
  type PipelineOutboxEntry,
  type StatusDocColumns,
} from '@dte/database';
import {
  PIPELINE_COMMIT_INTERVAL_MS,
  PIPELINE_TOPICS,
  type AvroConsumer,
  type Messaging,
} from '@dte/messaging';
import { StoredCredentials, UnusableCertificateError, type KeyWrapper } from '@dte/secrets';
import { LoopPause, workDueInBatches, type Logger } from '@dte/service-runtime';
import { SiiError, type SiiClient, type SiiSession, type UploadStatus } from '@dte/sii-client';
import { statusesReplacedBy } from '@dte/status';
import type { DataSource } from 'typeorm';

import { type PollerSettings } from './config';
import { SiiPace } from './pace';
import { documentQuery, loadDocs } from './documents';
import { DUE_CHECKS_SQL, Reconciler, type CheckRow } from './reconcile';
import { documentVerdict, readUploadStatus, uniformVerdict } from './verdicts';

export const POLLER_CONSUMER = 'sii-poller';
const SOURCE = 'sii-poller';

/** Value of dte.uploaded (schemas/avro/dte-uploaded.avsc). */
export interface EnvioUploaded {
  event_id: string;
  upload_id: string;
  organization_id: string;
  company_id: string;
  rut_emisor: string;
  sii_env: 'cert' | 'prod';
  certificate_id: string;
  track_id: string;
  dte_ids: string[];
  uploaded_at: string;
  refresh: boolean;
}

export interface PollerDeps {
  dataSource: DataSource;
  keys: KeyWrapper;
  sii: SiiClient;
  logger: Logger;
  settings: PollerSettings;
  clock?: () => Date;
}

interface PollRow {
  upload_id: string;
  organization_id: string;
  rut_emisor: string;
  sii_env: 'cert' | 'prod';
  certificate_id: string;
  track_id: string;
  dte_ids: string[];
  attempts: number;
  last_estado: string | null;
  version: number;
  /** sii_uploads.channel of the upload (read with the row); looked up when absent */
  channel?: 'dte' | 'boleta' | null;
  /** its certificate's row exists and is not deleted (read with the row) */
  certificate_live?: boolean;
  /** when the row was scheduled or last re-armed (read with the row): the envelope's age */
  armed_at?: Date | string | null;
  /** the last poll's instant (read with the row): with attempts > 0, a poll that found it in process */
  polled_at?: Date | string | null;
  /** the columns that name its documents in their messages: read only when a poll publishes */
  docs?: (StatusDocColumns & { request_id: string | null })[] | null;
}

/**
 * Takes (under a lease, `version` grows) up to $3 due uploads at $1, with everything a poll needs:
 * the upload's channel, whether its certificate is live, and since when it waits. Nothing of its
 * documents: a poll that finds the envelope where it was costs this one row, whatever the number
 * of documents; their names are read only when a status is published (write()).
 */
const DUE_POLLS_SQL = `UPDATE sii_polls SET next_poll_at = $2, version = version + 1, updated_at = $1
        WHERE upload_id IN (
          SELECT upload_id FROM sii_polls WHERE state = 'active' AND next_poll_at <= $1
           ORDER BY next_poll_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING upload_id, organization_id, rut_emisor, sii_env, certificate_id, track_id,
                  dte_ids::text[] AS dte_ids, attempts, last_estado, version,
                  (SELECT channel FROM sii_uploads WHERE sii_uploads.id = sii_polls.upload_id) AS channel,
                  EXISTS (SELECT 1 FROM certificates c
                           WHERE c.id = sii_polls.certificate_id AND c.deleted_at IS NULL) AS certificate_live,
                  COALESCE(armed_at, created_at) AS armed_at, polled_at`;

/** The envelope's age at its last poll since it was (re-)armed, if there was one. */
function inProcessAge(p: PollRow): number | undefined {
  if (p.attempts === 0 || !p.polled_at || !p.armed_at) return undefined;
  const age = new Date(p.polled_at).getTime() - new Date(p.armed_at).getTime();
  return age >= 0 ? age : undefined;
}

/** Per document status to publish, or one for all. */
interface Publication {
  estado: string;
  glosa?: string | null;
  perDoc?: Map<string, { estado: string; glosa?: string }>;
  /** observed_at = the poll's instant + this (orders two changes recorded by one poll) */
  offsetMs?: number;
}

type PollResult =
  | { next: 'again'; publish?: Publication; countsAsAttempt: boolean }
  | { next: 'done' | 'no_permission'; publish: Publication };

export class Poller {
  private readonly now: () => Date;
  private readonly credentials: StoredCredentials;
  private stopped = false;
  private readonly pause = new LoopPause();
  private loop?: Promise<void>;
  private consumer?: AvroConsumer;
  private readonly reconciler: Reconciler;
  /** request ids of the documents seen on dte.uploaded (log correlation, best effort) */
  private readonly requestIds = new RequestIds();
  /** when to poll: the SII's recent pace (pace.ts) */
  readonly pace: SiiPace;

  constructor(private readonly deps: PollerDeps) {
    this.now = deps.clock ?? (() => new Date());
    this.pace = new SiiPace(deps.settings);
    this.credentials = new StoredCredentials({
      db: deps.dataSource,
      keys: deps.keys,
      now: () => this.now().getTime(),
    });
    this.reconciler = new Reconciler({
      dataSource: deps.dataSource,
      logger: deps.logger,
      settings: deps.settings,
      now: () => this.now(),
      session: async (certificateId) => deps.sii.session(await this.credentials.get(certificateId)),
    });
  }

  async start(messaging?: Messaging): Promise<void> {
    this.loop = this.run();
    if (messaging) {
      this.consumer = await messaging.createConsumer({
        groupId: messaging.topic(POLLER_CONSUMER),
        topics: [PIPELINE_TOPICS.uploaded],
        fromBeginning: true,
        // a redelivered record finds its claim (processed_events)
        commitIntervalMs: PIPELINE_COMMIT_INTERVAL_MS,
      });
      await this.consumer.run<EnvioUploaded>(async (msg) => {
        if (msg.value === null) return;
        // x-request-ids: the api requests that issued the envelope's documents (the uploader's)
        const requestIds = this.requestIds.rememberAll(msg.headers['x-request-ids']);
        if (Object.keys(requestIds).length)
          this.deps.logger.debug(
            { uploadId: msg.value.upload_id, dteIds: msg.value.dte_ids, requestIds },
            'sii-poller: envelope uploaded',
          );
        await this.schedule(msg.value);
      });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pause.wake();
    await this.consumer?.disconnect();
    await this.loop;
  }

  /** Records an upload (or a refresh request) in the schedule; idempotent per event id. */
  async schedule(rec: EnvioUploaded): Promise<'scheduled' | 'rearmed' | 'duplicate'> {
    // a refresh is due now; an upload when the SII has lately been answering verdicts (pace.ts)
    const firstDelay = rec.refresh
      ? 0
      : this.pace.firstDelay(
          paceKey(
            await uploadChannel(this.deps.dataSource, rec.upload_id).catch(() => 'dte' as const),
            rec.sii_env,
          ),
        );
    const now = this.now();
    const values = [
      rec.upload_id,
      rec.organization_id,
      rec.company_id,
      rec.rut_emisor,
      rec.sii_env,
      rec.certificate_id,
      rec.track_id,
      rec.dte_ids,
    ];
    // ONE statement (atomic without a transaction of its own): the claim of the event id and,
    // only when it claimed, the row of the schedule
    const claim = `WITH claimed AS (
         INSERT INTO processed_events (consumer, event_id) VALUES ($11, $12)
         ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id
       ), scheduled AS (`;
    const claimedRows: { claimed: boolean }[] = await this.deps.dataSource.query(
      !rec.refresh
        ? `${claim}
           INSERT INTO sii_polls (upload_id, organization_id, company_id, rut_emisor, sii_env, certificate_id,
             track_id, dte_ids, state, attempts, next_poll_at, created_at, updated_at, armed_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8::uuid[], 'active', 0, $9, $10, $10, $10
            WHERE EXISTS (SELECT 1 FROM claimed)
           ON CONFLICT (upload_id) DO NOTHING
         ) SELECT EXISTS (SELECT 1 FROM claimed) AS claimed`
        : `${claim}
           INSERT INTO sii_polls (upload_id, organization_id, company_id, rut_emisor, sii_env, certificate_id,
             track_id, dte_ids, state, attempts, next_poll_at, created_at, updated_at, armed_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8::uuid[], 'active', 0, $9, $10, $10, $10
            WHERE EXISTS (SELECT 1 FROM claimed)
           ON CONFLICT (upload_id) DO UPDATE SET
             dte_ids = CASE WHEN sii_polls.state = 'active'
                            THEN ARRAY(SELECT DISTINCT unnest(sii_polls.dte_ids || EXCLUDED.dte_ids))
                            ELSE EXCLUDED.dte_ids END,
             certificate_id = EXCLUDED.certificate_id, track_id = EXCLUDED.track_id,
             state = 'active', attempts = 0, next_poll_at = $9, last_estado = NULL, last_glosa = NULL,
             version = sii_polls.version + 1, updated_at = $10, armed_at = $10
         ) SELECT EXISTS (SELECT 1 FROM claimed) AS claimed`,
      [...values, new Date(now.getTime() + firstDelay), now, POLLER_CONSUMER, rec.event_id],
    );
    const result = !claimedRows[0]?.claimed ? 'duplicate' : rec.refresh ? 'rearmed' : 'scheduled';
    if (result !== 'duplicate') this.pause.wake();
    return result;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.tick();
      } catch (err) {
        this.deps.logger.warn({ err }, 'sii-poller: schedule loop failed; retrying');
      }
      if (this.stopped) break;
      await this.pause.sleep(this.deps.settings.tickMs);
    }
  }

  /**
   * Polls every due upload, then checks every due document under reconciliation, once each. The
   * first batch of both is taken by ONE statement (an idle tick is one round trip).
   */
  async tick(): Promise<number> {
    const first = await this.takeBothDue();
    return (await this.tickUploads(first.polls)) + (await this.reconciler.tick(first.checks));
  }

  /** Polls every due row once (in batches of `concurrency`), starting with `first`, already taken. */
  private async tickUploads(first: PollRow[]): Promise<number> {
    let taken: PollRow[] | undefined = first;
    return workDueInBatches(
      async () => {
        const batch = taken ?? (await this.takeDue());
        taken = undefined;
        return batch;
      },
      this.deps.settings.concurrency,
      (p) => this.poll(p),
      (err, p) =>
        this.deps.logger.warn(
          { err, uploadId: p.upload_id },
          'sii-poller: poll failed; due again after the lease',
        ),
    );
  }

  private dueParams(): unknown[] {
    const now = this.now();
    return [now, new Date(now.getTime() + this.deps.settings.leaseMs), this.deps.settings.concurrency];
  }

  private async takeDue(): Promise<PollRow[]> {
    return returnedRows<PollRow>(await this.deps.dataSource.query(DUE_POLLS_SQL, this.dueParams()));
  }

  /** The first batch of due uploads and of due document checks, in one statement. */
  private async takeBothDue(): Promise<{ polls: PollRow[]; checks: CheckRow[] }> {
    const rows: { kind: 'poll' | 'check'; r: PollRow | CheckRow }[] = await this.deps.dataSource.query(
      `WITH p AS (${DUE_POLLS_SQL}), c AS (${DUE_CHECKS_SQL})
       SELECT 'poll' AS kind, to_jsonb(p) AS r FROM p
       UNION ALL
       SELECT 'check', to_jsonb(c) FROM c`,
      this.dueParams(),
    );
    return {
      polls: rows.flatMap((x) => (x.kind === 'poll' ? [x.r as PollRow] : [])),
      checks: rows.flatMap((x) => (x.kind === 'check' ? [x.r as CheckRow] : [])),
    };
  }

  /** One poll of one upload, recorded (exported through tick for tests). */
  async poll(p: PollRow): Promise<void> {
    let result: PollResult;
    try {
      const credential = await this.credentials.get(p.certificate_id, { seenLive: p.certificate_live });
      result =
        (p.channel ?? (await uploadChannel(this.deps.dataSource, p.upload_id))) === 'boleta'
          ? await pollBoletaUpload(this.deps.dataSource, this.deps.sii, credential, p)
          : await this.ask(this.deps.sii.session(credential), p);
    } catch (err) {
      if (err instanceof UnusableCertificateError) {
        result = { next: 'again', countsAsAttempt: true };
        this.deps.logger.warn({ uploadId: p.upload_id, reason: err.message }, 'sii-poller: cannot query');
      } else if (err instanceof SiiError) {
        if (err.kind === 'auth' || err.kind === 'rejected') {
          result = {
            next: 'no_permission',
            publish: { estado: 'sin_permiso_sii', glosa: err.glosa ?? err.message },
          };
        } else {
          result = { next: 'again', countsAsAttempt: true };
          this.deps.logger.info(
            { uploadId: p.upload_id, err: err.message },
            'sii-poller: SII failure; polling again',
          );
        }
      } else {
        // anything else (bad stored data the client refuses, ...) spends the budget too, so a
        // poll that can never succeed ends stuck instead of looping
        result = { next: 'again', countsAsAttempt: true };
        this.deps.logger.warn({ uploadId: p.upload_id, err }, 'sii-poller: poll failed');
      }
    }
    await this.record(p, result);
  }

  private async ask(session: SiiSession, p: PollRow): Promise<PollResult> {
    const st: UploadStatus = await session.queryUploadStatus({
      env: p.sii_env,
      rutCompany: p.rut_emisor,
      trackId: p.track_id,
    });
    const r = readUploadStatus(st);
    switch (r.kind) {
      case 'retry':
        return { next: 'again', countsAsAttempt: true };
      case 'progress':
        return {
          next: 'again',
          countsAsAttempt: true,
          ...(r.estado !== p.last_estado ? { publish: { estado: r.estado, glosa: r.glosa ?? null } } : {}),
        };
      case 'no_permission':
        return { next: 'no_permission', publish: { estado: 'sin_permiso_sii', glosa: r.glosa ?? null } };
      case 'verdict_all':
        return { next: 'done', publish: { estado: r.estado, glosa: r.glosa ?? null } };
      case 'processed': {
        const uniform = uniformVerdict(r.status);
        if (uniform) return { next: 'done', publish: { estado: uniform, glosa: r.status.glosa ?? null } };
        const docs = await loadDocs(this.deps.dataSource, p.dte_ids);
        const perDoc = new Map<string, { estado: string; glosa?: string }>();
        for (const d of docs) {
          // the query names the document as its XML does (receiver, date, total)
          const query = documentQuery(d, p.sii_env, p.rut_emisor);
          if (!query) {
            // QueryEstDte cannot name it (e.g. a total in foreign currency with decimals): no guess
            perDoc.set(d.id, {
              estado: 'stuck',
              glosa:
                'Envío procesado con rechazos o reparos; el estado de este documento no se puede consultar',
            });
            continue;
          }
          perDoc.set(d.id, documentVerdict(await session.queryDocumentStatus(query)));
        }
        return { next: 'done', publish: { estado: 'EPR', glosa: r.status.glosa ?? null, perDoc } };
      }
    }
  }

  private async record(p: PollRow, result: PollResult): Promise<void> {
    const s = this.deps.settings;
    const now = this.now();
    const publish: Publication[] = result.publish ? [result.publish] : [];
    const key = paceKey(p.channel ?? 'dte', p.sii_env);
    const ageMs = p.armed_at ? Math.max(0, now.getTime() - new Date(p.armed_at).getTime()) : 0;
    if (result.next !== 'again') {
      if (result.next === 'done') {
        const before = this.pace.expectedMs(key);
        this.pace.verdict(key, ageMs, p.attempts === 0, inProcessAge(p));
        this.deps.logger.debug(
          {
            key,
            ageMs,
            inProcessAgeMs: inProcessAge(p),
            attempts: p.attempts,
            before,
            after: this.pace.expectedMs(key),
          },
          'sii-poller: verdict; the pace learns',
        );
      }
      await this.write(p, now, result.next, p.attempts, now, result.publish.estado, publish);
      return;
    }
    const attempts = p.attempts + (result.countsAsAttempt ? 1 : 0);
    const lastEstado = result.publish?.estado ?? p.last_estado;
    if (attempts < s.maxAttempts) {
      const next = new Date(now.getTime() + this.pace.nextDelay(key, ageMs, attempts));
      await this.write(p, now, 'active', attempts, next, lastEstado, publish);
      return;
    }
    // exhausted: the code just seen (if new), then stuck one millisecond later in the same commit
    publish.push({
      estado: 'stuck',
      glosa: `Sin veredicto del SII después de ${attempts} consultas (último estado ${lastEstado ?? 'ninguno'})`,
      offsetMs: publish.length,
    });
    await this.write(p, now, 'stuck', attempts, now, lastEstado, publish);
  }

  /** Records a poll's outcome and its messages, unless the row was re-armed or taken since. */
  private async write(
    p: PollRow,
    now: Date,
    state: 'active' | 'done' | 'stuck' | 'no_permission',
    attempts: number,
    nextPollAt: Date,
    lastEstado: string | null,
    publish: Publication[],
  ): Promise<void> {
    if (publish.length === 0) {
      // nothing changed for the documents: the envelope's row only (attempts, next poll, polled_at),
      // not one write per document per poll
      await this.deps.dataSource.query(
        `UPDATE sii_polls SET state = $3, attempts = $4, next_poll_at = $5, last_estado = $6, updated_at = $7,
                polled_at = $7
          WHERE upload_id = $1 AND version = $2`,
        [p.upload_id, p.version, state, attempts, nextPollAt, lastEstado, now],
      );
      return;
    }
    // the documents' names, read when there is something to tell them
    const named = p.docs ?? (p.docs === null ? [] : await loadDocs(this.deps.dataSource, p.dte_ids));
    // the request id stored with the document: known even when this process never saw its dte.uploaded
    for (const d of named) this.requestIds.remember(d.id, d.request_id ?? undefined);
    // the last publication's records (a document's latest status) are applied by this statement
    // itself (own-status-write); earlier ones of the same answer go to the projector
    const ownStatuses: DteStatusValue[] = [];
    const entries: PipelineOutboxEntry[] = publish.flatMap((pub, i) =>
      named.map((d) => {
        const own = pub.perDoc?.get(d.id);
        const entry = statusChangeEntry(statusDocRef(d), {
          siiStatus: own?.estado ?? pub.estado,
          glosa: own ? (own.glosa ?? null) : (pub.glosa ?? null),
          trackId: p.track_id,
          observedAt: new Date(now.getTime() + (pub.offsetMs ?? 0)),
          source: SOURCE,
        });
        if (i === publish.length - 1) ownStatuses.push(entry.payload);
        return { ...entry, headers: this.requestIds.headersFor(d.id) };
      }),
    );
    // ONE statement, atomic on its own: the outcome on the schedule row (unless it was re-armed
    // or taken since: the version guard), sii_last_polled (and the latest status) on its
    // documents, locked in id order like every other batch writer of dtes (signer, uploader,
    // projector), so two writers over overlapping documents cannot deadlock, and the messages of
    // the documents it locked
    const own = ownStatusWriteSql(ownStatuses, { firstParam: 10, rows: 'l', replaces: statusesReplacedBy });
    const outbox = outboxInsertSql(entries, {
      firstParam: 10 + own.params.length,
      onlyIf: `(p::jsonb ->> 'dte_id')::uuid IN (SELECT id FROM l)`,
      headers: own.headers,
    });
    const done: { polled: boolean }[] = await this.deps.dataSource.query(
      `WITH polled AS (
         UPDATE sii_polls SET state = $3, attempts = $4, next_poll_at = $5, last_estado = $6, last_glosa = $7,
                updated_at = $8, polled_at = $8
          WHERE upload_id = $1 AND version = $2 RETURNING upload_id
       ), l AS MATERIALIZED (
         SELECT id, sii_status, observed_at FROM dtes
          WHERE id = ANY($9::uuid[]) AND EXISTS (SELECT 1 FROM polled) ORDER BY id FOR UPDATE
       ), ${own.ctes}, d AS (
         UPDATE dtes SET sii_last_polled = $8, ${own.set('m')}
           FROM l LEFT JOIN own_moved m ON m.dte_id = l.id WHERE dtes.id = l.id
       )${entries.length ? `, o AS (${outbox.sql})` : ''}
       SELECT EXISTS (SELECT 1 FROM polled) AS polled`,
      [
        p.upload_id,
        p.version,
        state,
        attempts,
        nextPollAt,
        lastEstado,
        publish.at(-1)?.glosa ?? null,
        now,
        p.dte_ids,
        ...own.params,
        ...(entries.length ? outbox.params : []),
      ],
    );
    if (!done[0]?.polled) return; // re-armed meanwhile: this answer is stale
    this.deps.logger.debug(
      {
        uploadId: p.upload_id,
        estados: publish.map((x) => x.estado),
        state,
        dteIds: p.dte_ids,
        requestIds: this.requestIds.of(p.dte_ids),
      },
      'sii-poller: status published',
    );
  }
}

/** The pace is learned per channel and SII environment (boletas answer through another service). */
function paceKey(channel: 'dte' | 'boleta', env: 'cert' | 'prod'): string {
  return `${channel}:${env}`;
}
