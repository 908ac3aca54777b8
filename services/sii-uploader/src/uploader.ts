/**
 * The sii-uploader: signed documents → EnvioDTEs → DTEUpload → track id.
 *
 * The database is the work list; dte.signed only wakes the loop (a periodic sweep is the
 * fallback, so a lost or early message delays nothing for long):
 *
 * 1. Grouping. Signed documents without an upload (dtes.signed_xml set, upload_id null) are
 *    grouped per (company, environment, certificate); a group leaves when it holds maxDocs
 *    documents or its oldest has waited maxWaitMs. Claiming binds the documents to a new
 *    `sii_uploads` row (state `claimed`) in one transaction, FOR UPDATE on the
 *    documents (under a per-group advisory lock): a document belongs to at most one upload, ever,
 *    whatever the number of instances.
 * 2. Building. The EnvioDTE (company resolution from `companies`, certificate opened in memory)
 *    is built once and its exact bytes are stored with state `sending` BEFORE any DTEUpload.
 * 3. Sending. Each attempt counts in `attempts` (committed before the HTTP call); the same
 *    stored bytes are sent every time.
 * 4. The answer is recorded in one transaction with its messages (outbox): accepted → track id
 *    on the upload and its documents, dte.uploaded and dte-status `sending` (with the track id)
 *    per document; repeated (STATUS 99) → `envio_repetido` and reconciliation (below); refused
 *    (no permission, schema, signature, size, a login the SII refuses) → `emision_fallida`;
 *    transient, or an answer that cannot be read → retried after a backoff until maxAttempts,
 *    then `emision_fallida`.
 *
 * Recovery rule (a process that dies at any instant): an instance owns an upload while its
 * lease (lease_until) runs; afterwards any instance takes it up again from its state.
 *   - `claimed`: nothing was sent; it is built and sent.
 *   - `sending`: a DTEUpload may have reached the SII (died during the call, or between the
 *     answer and its commit: `attempt_open` is still true). Only the stored bytes are re-sent,
 *     never a new envelope with these documents: if the SII had registered them it answers the
 *     repeated file (STATUS 99); if it had not, this is the first upload.
 *   - `accepted`, `failed`, `repeated`, `unconfirmed`: final; their messages were committed with
 *     the state.
 *
 * Reconciliation (the SII may hold the envelope, we have no track id): STATUS 99 to our own
 * stored bytes means the SII has them, so the upload ends `repeated`; an upload whose attempts
 * ran out (or whose last attempt was refused) after an attempt that may have reached the SII
 * (`maybe_registered`: an attempt of unknown fate, an unreadable answer, a transient failure
 * after the request was sent) ends `unconfirmed`, never `emision_fallida`. Both schedule every
 * document in `sii_doc_checks` in the same transaction: the sii-poller asks QueryEstDte per
 * document until its verdict, or ends it `stuck`. No document is ever put in a second envelope.
 */
import { createHash, randomUUID } from 'node:crypto';

import {
  outboxInsertSql,
  ownStatusWriteSql,
  returnedRows,
  statusChangeEntry,
  statusDocRef,
  RequestIds,
  type DteStatusValue,
  type PipelineOutboxEntry,
  type StatusDocColumns,
} from '@dte/database';
import type { SigningCredential } from '@dte/engine';
import {
  PIPELINE_COMMIT_INTERVAL_MS,
  PIPELINE_SCHEMAS,
  PIPELINE_TOPICS,
  type AvroConsumer,
  type Messaging,
} from '@dte/messaging';
import { StoredCredentials, UnusableCertificateError, type KeyWrapper } from '@dte/secrets';
import { LoopPause, workDueInBatches, type Logger } from '@dte/service-runtime';
import { SiiError, type SiiClient, type UploadOutcome } from '@dte/sii-client';
import { statusesReplacedBy } from '@dte/status';
import type { DataSource } from 'typeorm';

import {
  BOLETA_PREDICATE,
  buildEnvelope,
  maxDocsOf,
  sendBoletaEnvelope,
  type UploadChannel,
} from './boleta-channel';
import type { UploaderSettings } from './config';

export const UPLOADER_CONSUMER = 'sii-uploader';
const SOURCE = 'sii-uploader';

export interface UploaderDeps {
  dataSource: DataSource;
  keys: KeyWrapper;
  sii: SiiClient;
  logger: Logger;
  settings: UploaderSettings;
  clock?: () => Date;
}

interface UploadRow {
  id: string;
  organization_id: string;
  company_id: string;
  sii_env: 'cert' | 'prod';
  rut_emisor: string;
  certificate_id: string;
  /** dte: EnvioDTE by DTEUpload; boleta: EnvioBOLETA by the boleta REST channel */
  channel: UploadChannel;
  dte_ids: string[];
  state: 'claimed' | 'sending' | 'accepted' | 'failed' | 'repeated' | 'unconfirmed';
  /** the stored bytes: set by build, or read for a re-send (not read with the row) */
  envio_xml?: Buffer | null;
  attempts: number;
  /** some attempt may have reached the SII (see the recovery rule) */
  maybe_registered: boolean;
  /** its certificate's row exists and is not deleted (read with the row) */
  certificate_live: boolean;
  /** the company's SII resolution for the upload's environment (read with the row) */
  nro_resol: number | null;
  fch_resol: string | null;
  /** the columns that name its documents in their messages (read with the row) */
  docs: (StatusDocColumns & { request_id: string | null })[] | null;
  /** set by build: the statement that stored the bytes opened this attempt too */
  attemptOpened?: boolean;
}

/** How an upload ends: the state and what it publishes for its documents. */
type Ending = 'accepted' | 'failed' | 'repeated' | 'unconfirmed';

/** The envelope cannot be built (resolution, engine rule; an unusable certificate likewise): emision_fallida. */
class CannotBuild extends Error {}

function pgArray(ids: string[]): string {
  return `{${ids.join(',')}}`;
}

/** A group of signed documents waiting for an envelope. */
interface WaitingGroup {
  company_id: string;
  sii_env: 'cert' | 'prod';
  certificate_id: string;
  channel: UploadChannel;
  n: number;
  /** the oldest signed_at (a Date, or its JSON text) */
  oldest: Date | string;
}

/** The signed documents without an upload, grouped per envelope they may form. */
const WAITING_GROUPS_SQL = `SELECT company_id, sii_env, certificate_id,
              CASE WHEN ${BOLETA_PREDICATE} THEN 'boleta' ELSE 'dte' END AS channel,
              count(*)::int AS n, min(signed_at) AS oldest
           FROM dtes WHERE upload_id IS NULL AND signed_xml IS NOT NULL
          GROUP BY company_id, sii_env, certificate_id, 4`;

/**
 * Leases (until $2) up to $3 uploads due at $1, with everything working them needs but the stored
 * bytes (read only for a re-send): whether the certificate is live, the company's resolution
 * for the environment, and the names of the documents for their messages.
 */
const DUE_UPLOADS_SQL = `UPDATE sii_uploads SET lease_until = $2, updated_at = $1
        WHERE id IN (
          SELECT id FROM sii_uploads
           WHERE state IN ('claimed', 'sending') AND next_attempt_at <= $1
             AND (lease_until IS NULL OR lease_until <= $1)
           ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING id, organization_id, company_id, sii_env, rut_emisor, certificate_id, channel,
                  dte_ids::text[] AS dte_ids, state, attempts, maybe_registered,
                  EXISTS (SELECT 1 FROM certificates c
                           WHERE c.id = sii_uploads.certificate_id AND c.deleted_at IS NULL) AS certificate_live,
                  (SELECT CASE WHEN sii_uploads.sii_env = 'cert' THEN co.resolucion_cert_numero
                               ELSE co.resolucion_prod_numero END
                     FROM companies co WHERE co.id = sii_uploads.company_id) AS nro_resol,
                  (SELECT to_char(CASE WHEN sii_uploads.sii_env = 'cert' THEN co.resolucion_cert_fecha
                                       ELSE co.resolucion_prod_fecha END, 'YYYY-MM-DD')
                     FROM companies co WHERE co.id = sii_uploads.company_id) AS fch_resol,
                  (SELECT json_agg(json_build_object('id', d.id, 'organization_id', d.organization_id,
                            'sii_env', d.sii_env, 'tipo_dte', d.tipo_dte, 'folio', d.folio,
                            'request_id', d.request_id) ORDER BY d.id)
                     FROM dtes d WHERE d.id = ANY(sii_uploads.dte_ids)) AS docs`;

export class Uploader {
  private readonly now: () => Date;
  /** opened certificates, kept in memory for the next envelopes */
  private readonly credentials: StoredCredentials;
  private stopped = false;
  private readonly pause = new LoopPause();
  private loop?: Promise<void>;
  private consumer?: AvroConsumer;
  /** request ids of the documents seen on dte.signed (log correlation, best effort) */
  private readonly requestIds = new RequestIds();

  constructor(private readonly deps: UploaderDeps) {
    this.now = deps.clock ?? (() => new Date());
    this.credentials = new StoredCredentials({
      db: deps.dataSource,
      keys: deps.keys,
      now: () => this.now().getTime(),
    });
  }

  /** Starts the work loop and, with messaging, the dte.signed consumer that wakes it. */
  async start(messaging?: Messaging): Promise<void> {
    this.loop = this.run();
    if (messaging) {
      this.consumer = await messaging.createConsumer({
        groupId: messaging.topic(UPLOADER_CONSUMER),
        topics: [PIPELINE_TOPICS.signed],
        fromBeginning: true,
        // a message only wakes the loop: one seen again wakes it again, nothing more
        commitIntervalMs: PIPELINE_COMMIT_INTERVAL_MS,
        // a wake-up only hastens what the sweep would find anyway (a group leaves at its oldest
        // document's signed_at + maxWaitMs, whenever it is seen): under load a fetch waits for
        // 16 KiB or one sweep period, so it answers a few times per second, not per relay round
        minBytes: 16 * 1024,
        maxWaitTimeInMs: Math.min(this.deps.settings.sweepMs, 1000),
      });
      // one call per fetched batch: the batch wakes the loop once
      await this.consumer.runBatch<{ dte_id: string }>(async (msgs) => {
        const debug = this.deps.logger.isLevelEnabled('debug');
        for (const msg of msgs) {
          // x-request-id: the api request that issued the document (passed on by the signer)
          const requestId = msg.headers['x-request-id'];
          if (msg.value && requestId) {
            this.requestIds.remember(msg.value.dte_id, requestId);
            if (debug)
              this.deps.logger.debug({ dteId: msg.value.dte_id, requestId }, 'sii-uploader: document signed');
          }
        }
        this.poke();
      });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.consumer?.disconnect();
    await this.loop;
  }

  /** Something changed (a document was signed): look at the work list now. */
  poke(): void {
    this.pause.wake();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let delay = this.deps.settings.sweepMs;
      try {
        delay = Math.min(delay, await this.tick());
      } catch (err) {
        this.deps.logger.warn({ err }, 'sii-uploader: work loop failed; retrying');
      }
      if (this.stopped) break;
      await this.pause.sleep(Math.max(delay, 10));
    }
  }

  /**
   * One pass: form due envelopes, then send due uploads. Returns ms until the next due group.
   * ONE statement reads the waiting groups and takes the due uploads (an idle pass is one round
   * trip); the uploads are taken again after new envelopes were claimed.
   */
  async tick(): Promise<number> {
    const rows: { kind: 'group' | 'upload'; r: WaitingGroup | UploadRow }[] =
      await this.deps.dataSource.query(
        `WITH due AS (${DUE_UPLOADS_SQL}), g AS (${WAITING_GROUPS_SQL})
       SELECT 'group' AS kind, to_jsonb(g) AS r FROM g
       UNION ALL
       SELECT 'upload', to_jsonb(due) FROM due`,
        this.dueParams(),
      );
    const groups = rows.flatMap((x) => (x.kind === 'group' ? [x.r as WaitingGroup] : []));
    const taken = rows.flatMap((x) => (x.kind === 'upload' ? [x.r as UploadRow] : []));
    const { next, claimed } = await this.formUploads(groups);
    if (claimed > 0 || taken.length > 0) await this.processDueUploads(taken, claimed > 0);
    return next;
  }

  /**
   * Claims documents into new uploads for every group (of `groups`) that is due; ms until the
   * next one is, and how many documents were claimed.
   */
  private async formUploads(groups: WaitingGroup[]): Promise<{ next: number; claimed: number }> {
    const { maxDocs, maxWaitMs } = this.deps.settings;
    const now = this.now();
    let claimedDocs = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const g of groups) {
      const dueAt = new Date(g.oldest).getTime() + maxWaitMs;
      const groupMax = maxDocsOf(g.channel, maxDocs);
      if (g.n < groupMax && dueAt > now.getTime()) {
        next = Math.min(next, dueAt - now.getTime());
        continue;
      }
      // a full group may hold several envelopes' worth
      for (;;) {
        const claimed = await this.claimGroup(g.company_id, g.sii_env, g.certificate_id, g.channel);
        claimedDocs += claimed;
        if (claimed < groupMax) break;
      }
    }
    return { next, claimed: claimedDocs };
  }

  private async claimGroup(
    companyId: string,
    env: 'cert' | 'prod',
    certificateId: string,
    channel: UploadChannel = 'dte',
  ): Promise<number> {
    const { maxWaitMs } = this.deps.settings;
    const maxDocs = maxDocsOf(channel, this.deps.settings.maxDocs);
    const now = this.now();
    return this.deps.dataSource.transaction(async (m) => {
      // one claim per group at a time across instances; the row locks then wait for short
      // writers (the projector) instead of skipping their rows and splitting the envelope
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `sii-upload-claim:${companyId}:${env}:${certificateId}:${channel}`,
      ]);
      const picked: { id: string; organization_id: string; rut_emisor: string; signed_at: Date }[] =
        await m.query(
          // the oldest first; rows of dtes are locked in id order (as the signer's and the
          // projector's batches lock them), so two multi-row lockers never deadlock
          `SELECT id, organization_id, rut_emisor, signed_at FROM dtes
          WHERE id IN (SELECT id FROM dtes
                        WHERE company_id = $1 AND sii_env = $2 AND certificate_id = $3
                          AND upload_id IS NULL AND signed_xml IS NOT NULL
                          AND (${BOLETA_PREDICATE}) = $5
                        ORDER BY signed_at, id LIMIT $4)
            AND upload_id IS NULL AND signed_xml IS NOT NULL
          ORDER BY id FOR UPDATE`,
          [companyId, env, certificateId, maxDocs, channel === 'boleta'],
        );
      picked.sort(
        (a, b) =>
          new Date(a.signed_at).getTime() - new Date(b.signed_at).getTime() || a.id.localeCompare(b.id),
      );
      if (picked.length === 0) return 0;
      // another instance may hold part of the group: a partial group still waits its turn
      const oldest = Math.min(...picked.map((p) => new Date(p.signed_at).getTime()));
      if (picked.length < maxDocs && oldest + maxWaitMs > now.getTime()) return 0;
      const id = randomUUID();
      const ids = picked.map((p) => p.id);
      // the documents bound to the upload and its row in ONE statement
      await m.query(
        `WITH bound AS (UPDATE dtes SET upload_id = $1 WHERE id = ANY($7::uuid[]) AND upload_id IS NULL)
         INSERT INTO sii_uploads (id, organization_id, company_id, sii_env, rut_emisor, certificate_id, dte_ids,
           state, attempts, next_attempt_at, created_at, updated_at, channel)
         VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[], 'claimed', 0, $8, $8, $8, $9)`,
        [
          id,
          picked[0].organization_id,
          companyId,
          env,
          picked[0].rut_emisor,
          certificateId,
          pgArray(ids),
          now,
          channel,
        ],
      );
      this.deps.logger.debug({ uploadId: id, documents: ids.length }, 'sii-uploader: envelope claimed');
      return picked.length;
    });
  }

  /**
   * Takes the due uploads (their lease) and works each to its next state. `taken`: uploads
   * leased already (by the tick's statement), worked first; with `takeMore` (envelopes were
   * claimed since they were taken) the due uploads are taken again with them.
   */
  async processDueUploads(taken?: UploadRow[], takeMore = false): Promise<void> {
    let first = taken;
    await workDueInBatches(
      async () => {
        if (!first) return this.takeDue();
        const batch = takeMore ? [...first, ...(await this.takeDue())] : first;
        first = undefined;
        return batch;
      },
      this.deps.settings.concurrency,
      (u) => this.work(u),
      (err, u) =>
        this.deps.logger.warn(
          { err, uploadId: u.id },
          'sii-uploader: upload step failed; the lease will expire',
        ),
    );
  }

  private dueParams(): unknown[] {
    const { concurrency, leaseMs } = this.deps.settings;
    const now = this.now();
    return [now, new Date(now.getTime() + leaseMs), concurrency];
  }

  /** Leases up to `concurrency` due uploads. */
  private async takeDue(): Promise<UploadRow[]> {
    return returnedRows<UploadRow>(await this.deps.dataSource.query(DUE_UPLOADS_SQL, this.dueParams())).map(
      (r) => ({ ...r, dte_ids: typeof r.dte_ids === 'string' ? parsePgArray(r.dte_ids) : r.dte_ids }),
    );
  }

  private async work(u: UploadRow): Promise<void> {
    let credential: SigningCredential;
    try {
      // the not-deleted check was made by the statement that took the upload
      credential = await this.credentials.get(u.certificate_id, { seenLive: u.certificate_live });
      if (u.state === 'claimed') u.envio_xml = await this.build(u, credential);
      else u.envio_xml = await this.storedEnvelope(u.id);
    } catch (err) {
      if (!(err instanceof CannotBuild) && !(err instanceof UnusableCertificateError)) throw err;
      await this.finish(u, 'failed', { outcome: 'build', glosa: err.message });
      return;
    }
    await this.send(u, credential);
  }

  /** The stored bytes of an upload in state `sending` (the same bytes go on every attempt). */
  private async storedEnvelope(id: string): Promise<Buffer> {
    const rows: { envio_xml: Buffer | null }[] = await this.deps.dataSource.query(
      'SELECT envio_xml FROM sii_uploads WHERE id = $1',
      [id],
    );
    const xml = rows[0]?.envio_xml;
    if (!xml) throw new Error(`upload ${id} is sending without stored bytes`);
    return xml;
  }

  /** Builds the envelope and stores its bytes with state `sending` (before any DTEUpload). */
  private async build(u: UploadRow, credential: SigningCredential): Promise<Buffer> {
    const db = this.deps.dataSource;
    // the company's resolution was read by the statement that took the upload
    const { nro_resol: nroResol, fch_resol: fchResol } = u;
    if (nroResol == null || !fchResol)
      throw new CannotBuild(`the company has no SII resolution for ${u.sii_env} (FchResol/NroResol)`);
    const docs: { id: string; signed_xml: string }[] = await db.query(
      'SELECT id, signed_xml FROM dtes WHERE id = ANY($1::uuid[])',
      [u.dte_ids],
    );
    const byId = new Map(docs.map((d) => [d.id, d.signed_xml]));
    const signed = u.dte_ids.map((id) => byId.get(id));
    if (signed.some((x) => !x)) throw new CannotBuild('a document of the envelope has no signed XML');
    let xml: Buffer;
    try {
      xml = buildEnvelope(u.channel ?? 'dte', signed as string[], {
        rutEmisor: u.rut_emisor,
        rutEnvia: credential.info.rut,
        fchResol,
        nroResol,
        credential,
        timestamp: this.now(),
      });
    } catch (err) {
      throw new CannotBuild(`the EnvioDTE cannot be built: ${(err as Error).message}`);
    }
    const sha = createHash('sha256').update(xml).digest('hex');
    // the bytes with state `sending` and the first attempt opened (see send) in ONE statement:
    // both are on record before the request can leave
    const updated: unknown[] = await db.query(
      `UPDATE sii_uploads SET state = 'sending', envio_xml = $2, envio_sha256 = $3, updated_at = $4,
              attempts = attempts + 1, maybe_registered = maybe_registered OR attempt_open, attempt_open = true
        WHERE id = $1 AND state = 'claimed' RETURNING maybe_registered`,
      [u.id, xml, sha, this.now()],
    );
    const opened = returnedRows<{ maybe_registered: boolean }>(updated);
    if (opened.length !== 1) throw new Error(`upload ${u.id} left state claimed under us`);
    u.state = 'sending';
    u.attempts += 1;
    u.maybe_registered = opened[0]!.maybe_registered;
    u.attemptOpened = true;
    return xml;
  }

  private async send(u: UploadRow, credential: SigningCredential): Promise<void> {
    const { maxAttempts, retryDelayMs, retryMaxDelayMs } = this.deps.settings;
    const db = this.deps.dataSource;
    // the attempt is on record before the request can leave; an attempt still open from before
    // (its process died during the call or before recording the answer) may have reached the SII
    // (opened already by build when it stored the bytes just now)
    if (!u.attemptOpened) {
      const opened: unknown[] = await db.query(
        `UPDATE sii_uploads SET attempts = attempts + 1, maybe_registered = maybe_registered OR attempt_open,
                attempt_open = true, updated_at = $2
          WHERE id = $1 RETURNING maybe_registered`,
        [u.id, this.now()],
      );
      u.attempts += 1;
      u.maybe_registered = returnedRows<{ maybe_registered: boolean }>(opened)[0].maybe_registered;
    }
    /** a refusal: emision_fallida, unless an earlier attempt may have reached the SII */
    const refuse = (r: { outcome: string; glosa: string }) =>
      this.finish(u, u.maybe_registered ? 'unconfirmed' : 'failed', r);
    let outcome: UploadOutcome;
    let uploaded = true;
    try {
      outcome =
        u.channel === 'boleta'
          ? await sendBoletaEnvelope(this.deps.sii, credential, {
              env: u.sii_env,
              rutCompany: u.rut_emisor,
              xml: u.envio_xml!,
            })
          : await this.deps.sii
              .session(credential)
              .uploadEnvio({ env: u.sii_env, rutCompany: u.rut_emisor, xml: u.envio_xml! });
    } catch (err) {
      // only the login throws (nothing was uploaded by this attempt)
      if (!(err instanceof SiiError)) throw err;
      uploaded = false;
      if (err.kind === 'auth' || err.kind === 'rejected') {
        await refuse({ outcome: 'login', glosa: `Login en el SII rechazado: ${err.message}` });
        return;
      }
      outcome =
        err.kind === 'transient' ? { kind: 'transient', error: err } : { kind: 'protocol', error: err };
    }
    switch (outcome.kind) {
      case 'accepted':
        await this.finish(u, 'accepted', { outcome: 'accepted', trackId: outcome.trackId });
        return;
      case 'repeated':
        // always our own stored bytes: the SII holds this envelope (reconciled per document)
        await this.finish(u, 'repeated', {
          outcome: 'repeated',
          glosa: `El SII informó el envío como repetido (STATUS ${outcome.status}); se consulta el estado de cada documento`,
        });
        return;
      case 'transient':
      case 'protocol': {
        if (outcome.kind === 'protocol' && !uploaded) {
          await refuse({ outcome: 'login', glosa: `Login en el SII fallido: ${outcome.error.message}` });
          return;
        }
        // an answer that cannot be read, or a failure after the request left: the SII may have
        // registered the envelope; the same stored bytes go again (a repeat answers STATUS 99)
        const reached = uploaded && (outcome.kind === 'protocol' || outcome.error.requestSent === true);
        u.maybe_registered ||= reached;
        const glosa =
          outcome.kind === 'protocol'
            ? `Respuesta ilegible del SII: ${outcome.error.message}`
            : `Error transitorio del SII: ${outcome.error.message}`;
        if (u.attempts >= maxAttempts) {
          await this.finish(u, u.maybe_registered ? 'unconfirmed' : 'failed', {
            outcome: outcome.kind,
            glosa: `${glosa} (${u.attempts} intentos)`,
          });
          return;
        }
        const delay = Math.min(retryDelayMs * 2 ** (u.attempts - 1), retryMaxDelayMs);
        await db.query(
          `UPDATE sii_uploads SET next_attempt_at = $2, lease_until = NULL, outcome = $5, outcome_glosa = $3,
                  attempt_open = false, maybe_registered = maybe_registered OR $6, updated_at = $4 WHERE id = $1`,
          [u.id, new Date(this.now().getTime() + delay), glosa, this.now(), outcome.kind, reached],
        );
        this.deps.logger.info(
          { uploadId: u.id, attempts: u.attempts, delay, maybeRegistered: u.maybe_registered },
          'sii-uploader: no usable answer; retrying with the same bytes',
        );
        return;
      }
      default: {
        const e = outcome.error;
        const glosa = `Envío rechazado por el SII (${outcome.kind}${e.siiCode ? ` ${e.siiCode}` : ''}): ${e.glosa ?? e.message}`;
        await refuse({ outcome: outcome.kind, glosa });
      }
    }
  }

  /** Records the final state of an upload with its messages, in one transaction. */
  private async finish(
    u: UploadRow,
    state: Ending,
    r: { outcome: string; glosa?: string; trackId?: string },
  ): Promise<void> {
    const now = this.now();
    // the documents' names were read by the statement that took the upload
    const docs = (u.docs ?? []).map((d) => {
      // the request id stored with the document: known even when this process never saw its dte.signed
      this.requestIds.remember(d.id, d.request_id ?? undefined);
      return statusDocRef(d);
    });
    const entries: PipelineOutboxEntry[] = [];
    if (state === 'accepted') {
      entries.push({
        topic: PIPELINE_TOPICS.uploaded,
        schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.uploaded],
        key: u.id,
        payload: {
          event_id: randomUUID(),
          upload_id: u.id,
          organization_id: u.organization_id,
          company_id: u.company_id,
          rut_emisor: u.rut_emisor,
          sii_env: u.sii_env,
          certificate_id: u.certificate_id,
          track_id: r.trackId!,
          dte_ids: u.dte_ids,
          uploaded_at: now.toISOString(),
          refresh: false,
        },
        // an envelope covers several requests: their ids as one JSON header, never one x-request-id
        headers: this.requestIds.headersForMany(u.dte_ids),
      });
    }
    const status = STATUS_OF[state];
    // `sending`, with the track id, is applied by this statement itself (own-status-write)
    const ownStatuses: DteStatusValue[] = [];
    if (status)
      for (const d of docs) {
        const entry = statusChangeEntry(d, {
          siiStatus: status,
          glosa: r.glosa ?? null,
          trackId: r.trackId ?? null,
          observedAt: now,
          source: SOURCE,
        });
        if (state === 'accepted') ownStatuses.push(entry.payload);
        entries.push({ ...entry, headers: this.requestIds.headersFor(d.id) });
      }
    // ONE statement, atomic on its own: the upload's final state (unless another instance
    // finished it), and only then: accepted, the track id on its documents (locked in id order,
    // as every batch writer of dtes locks them); repeated or unconfirmed, its documents on the
    // poller's reconciliation schedule; and the messages
    const params: unknown[] = [u.id, state, r.outcome, r.glosa ?? null, r.trackId ?? null, now];
    const arg = (v: unknown): string => `$${params.push(v)}`;
    const parts = [
      `moved AS (
         UPDATE sii_uploads SET state = $2, outcome = $3, outcome_glosa = $4, track_id = $5, lease_until = NULL,
                attempt_open = false, uploaded_at = CASE WHEN $2 = 'accepted' THEN $6::timestamptz ELSE uploaded_at END,
                updated_at = $6
          WHERE id = $1 AND state IN ('claimed', 'sending') RETURNING id
       )`,
    ];
    let own: ReturnType<typeof ownStatusWriteSql> | null = null;
    if (state === 'accepted') {
      const ids = arg(u.dte_ids);
      own = ownStatusWriteSql(ownStatuses, {
        firstParam: params.length + 1,
        rows: 'l',
        replaces: statusesReplacedBy,
      });
      params.push(...own.params);
      parts.push(
        `l AS MATERIALIZED (
           SELECT id, sii_status, observed_at FROM dtes
            WHERE id = ANY(${ids}::uuid[]) AND EXISTS (SELECT 1 FROM moved)
            ORDER BY id FOR UPDATE
         )`,
        own.ctes,
        `tracked AS (
           UPDATE dtes SET track_id = $5, ${own.set('m', ['track_id'])}
             FROM l LEFT JOIN own_moved m ON m.dte_id = l.id WHERE dtes.id = l.id
         )`,
      );
    }
    if (state === 'repeated' || state === 'unconfirmed')
      parts.push(
        `scheduled AS (
           INSERT INTO sii_doc_checks (dte_id, upload_id, organization_id, company_id, rut_emisor, sii_env,
             certificate_id, state, attempts, next_check_at, created_at, updated_at)
           SELECT d, $1, ${arg(u.organization_id)}, ${arg(u.company_id)}, ${arg(u.rut_emisor)}, ${arg(u.sii_env)},
                  ${arg(u.certificate_id)}, 'active', 0, $6, $6, $6
             FROM unnest(${arg(u.dte_ids)}::uuid[]) AS d WHERE EXISTS (SELECT 1 FROM moved)
           ON CONFLICT (dte_id) DO NOTHING
         )`,
      );
    if (entries.length) {
      const outbox = outboxInsertSql(entries, {
        firstParam: params.length + 1,
        onlyIf: 'EXISTS (SELECT 1 FROM moved)',
        ...(own ? { headers: own.headers } : {}),
      });
      params.push(...outbox.params);
      parts.push(`written AS (${outbox.sql})`);
    }
    await this.deps.dataSource.query(
      `WITH ${parts.join(', ')} SELECT EXISTS (SELECT 1 FROM moved) AS moved`,
      params,
    );
    const log = state === 'accepted' || state === 'repeated' ? this.deps.logger.info : this.deps.logger.warn;
    log.call(
      this.deps.logger,
      {
        uploadId: u.id,
        state,
        trackId: r.trackId,
        glosa: r.glosa,
        dteIds: u.dte_ids,
        requestIds: this.requestIds.of(u.dte_ids),
      },
      `sii-uploader: upload ${state}`,
    );
  }
}

/**
 * dte-status published for the documents of an upload that ends in this state. `unconfirmed`
 * publishes nothing: the documents stay `signed` (en_proceso) while the poller reconciles them.
 * Reconciled documents never get a track id, hence no dte.emitted (it fires on a track id).
 */
const STATUS_OF: Record<Ending, string | undefined> = {
  accepted: 'sending',
  failed: 'emision_fallida',
  repeated: 'envio_repetido',
  unconfirmed: undefined,
};

function parsePgArray(text: string): string[] {
  const inner = text.replace(/^\{|\}$/g, '');
  return inner ? inner.split(',') : [];
}
