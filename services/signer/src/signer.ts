/**
 * The signer: consumes dte.commands and, for each document, stamps the TED with the CAF's key
 * and signs it with the company's certificate (both opened in memory only), then in ONE
 * statement (one transaction): claims the command's event id (processed_events, consumer `signer`),
 * stores signed_xml/signed_at (only if the row has none) with the `signed` status and its feed
 * event (@dte/database own-status-write) and writes dte.signed and a dte-status `signed` to the
 * outbox. A replay of the command finds its claim and does nothing, so a document is never
 * signed twice and its stored XML never changes; a crash before the commit leaves nothing, and
 * the redelivered command does the work again.
 *
 * A document that cannot be signed for a reason retrying will not cure (the certificate or the
 * CAF key does not open, the certificate expired, the CAF does not cover the folio...) gets the
 * requiere_accion outcome `emision_fallida` with the reason as glosa, in the same kind of
 * transaction, and the consumer moves on: no crash loop. Failures that may pass (database
 * down, master key unavailable) throw, and the command is redelivered.
 */
import {
  correlationHeaders,
  outboxInsertSql,
  ownStatusWriteSql,
  statusChangeEntry,
  type DteStatusValue,
  type PipelineOutboxEntry,
} from '@dte/database';
import type { Caf, DteDocument, SigningCredential } from '@dte/engine';
import { statusesReplacedBy } from '@dte/status';
import {
  PIPELINE_COMMIT_INTERVAL_MS,
  PIPELINE_SCHEMAS,
  PIPELINE_TOPICS,
  signedKey,
  type AvroConsumer,
  type Messaging,
} from '@dte/messaging';
import {
  KmsUnavailableError,
  StoredCredentials,
  UnusableCertificateError,
  openCafPrivateKey,
  type KeyWrapper,
} from '@dte/secrets';
import type { Logger } from '@dte/service-runtime';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { OpenedCafs } from './opened-cafs';
import { signStoredDocument } from './sign-document';

export const SIGNER_CONSUMER = 'signer';

/** Value of dte.commands (schemas/avro/dte-commands.avsc). */
export interface EmitDteCommand {
  event_id: string;
  dte_id: string;
  organization_id: string;
  company_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: number;
  certificate_id: string;
  caf_id: string;
  requested_at: string;
}

export interface SignerDeps {
  dataSource: DataSource;
  keys: KeyWrapper;
  logger: Logger;
  /** the signing instant (TmstFirma, TSTED) and observed_at of `signed` */
  clock?: () => Date;
  /**
   * opened certificates kept in memory (a .p12 costs ~30 ms to open, most of a document's
   * signing time); without it each document opens its certificate again
   */
  credentials?: StoredCredentials;
  /**
   * opened CAFs kept in memory (its row read, key unsealed and parsed once per 5 min); without
   * it each batch opens its CAFs again and wipes their key text when done
   */
  cafs?: OpenedCafs;
}

/** A document that cannot be signed as it stands: the reason becomes its glosa. */
class CannotSign extends Error {}

interface DocRow {
  id: string;
  organization_id: string;
  company_id: string;
  sii_env: 'cert' | 'prod';
  tipo_dte: number;
  folio: string;
  caf_id: string;
  certificate_id: string;
  rut_emisor: string;
  document: DteDocument;
  /** signed_xml is set */
  signed: boolean;
  /** its certificate's row exists and is not deleted (read with the document) */
  certificate_live: boolean;
}

export type SignResult = 'signed' | 'duplicate' | 'already_signed' | 'failed' | 'unknown_document';

async function loadCaf(db: DataSource, keys: KeyWrapper, cafId: string): Promise<Caf> {
  const rows: {
    id: string;
    rut_emisor: string;
    tipo_dte: number;
    desde: string;
    hasta: string;
    fecha_autorizacion: string;
    expires_at: Date | null;
    idk: number;
    caf_xml: string;
    rsa_public_key_pem: string;
    rsa_private_key_sealed: unknown;
  }[] = await db.query(
    `SELECT id, rut_emisor, tipo_dte, desde, hasta, to_char(fecha_autorizacion, 'YYYY-MM-DD') AS fecha_autorizacion,
            expires_at, idk, caf_xml, rsa_public_key_pem, rsa_private_key_sealed
       FROM cafs WHERE id = $1`,
    [cafId],
  );
  const r = rows[0];
  if (!r) throw new CannotSign(`CAF ${cafId} does not exist`);
  let rsaPrivateKeyPem: string;
  try {
    rsaPrivateKeyPem = await openCafPrivateKey(keys, r.id, r.rsa_private_key_sealed);
  } catch (err) {
    if (err instanceof KmsUnavailableError) throw err;
    throw new CannotSign('the stored CAF key cannot be decrypted');
  }
  return {
    rutEmisor: r.rut_emisor,
    razonSocial: '',
    tipoDte: r.tipo_dte,
    desde: Number(r.desde),
    hasta: Number(r.hasta),
    fechaAutorizacion: r.fecha_autorizacion,
    idk: r.idk,
    expiresAt: r.expires_at ? new Date(r.expires_at) : null,
    rsaPublicKeyPem: r.rsa_public_key_pem,
    rsaPrivateKeyPem,
    cafElementXml: r.caf_xml,
  };
}

/** Handles one command (exported for tests): a batch of one. */
export async function signCommand(deps: SignerDeps, cmd: EmitDteCommand): Promise<SignResult> {
  return (await signCommands(deps, [cmd]))[0]!;
}

/**
 * Handles a batch of commands with the outcome of handling them one by one in order: the
 * documents are read in one statement, each CAF is opened once per batch (once per 5 min with
 * `deps.cafs`, as the running signer does) and each certificate once per process
 * (StoredCredentials; its not-deleted check made by the read of the documents), the signing is
 * done in memory, then ONE statement (atomic on its own, no transaction round trips) claims every
 * event id, locks the claimed documents in id order, stores the signed XMLs of those still
 * unsigned and writes their outbox messages. A batch that names a document twice is handled in
 * runs without repeats, in order. Returns each command's result, in order. `headers[i]` are the
 * Kafka headers of cmds[i]: its `x-request-id` is passed on (with `x-dte-id`) to the messages
 * written for that document.
 */
export async function signCommands(
  deps: SignerDeps,
  cmds: EmitDteCommand[],
  headers?: (Record<string, string> | undefined)[],
): Promise<SignResult[]> {
  if (cmds.length === 0) return [];
  const runs = runsWithoutRepeats(cmds);
  if (runs.length > 1) {
    // a document commanded twice in one batch: the later command sees the earlier's effects
    const results: SignResult[] = [];
    let at = 0;
    for (const run of runs) {
      results.push(...(await signCommands(deps, run, headers?.slice(at, at + run.length))));
      at += run.length;
    }
    return results;
  }
  const db = deps.dataSource;
  const now = (deps.clock ?? (() => new Date()))();
  const rows: DocRow[] = await db.query(
    `SELECT id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id, rut_emisor,
            document, signed_xml IS NOT NULL AS signed,
            EXISTS (SELECT 1 FROM certificates c WHERE c.id = dtes.certificate_id AND c.deleted_at IS NULL)
              AS certificate_live
       FROM dtes WHERE id = ANY($1::uuid[])`,
    [[...new Set(cmds.map((c) => c.dte_id))]],
  );
  const docs = new Map(rows.map((r) => [r.id, r]));
  const credentials =
    deps.credentials ?? new StoredCredentials({ db, keys: deps.keys, now: () => Date.now() });
  const cafs = new Map<string, Promise<Caf>>();
  // each certificate's credential (and its not-deleted check) once per batch, not once per document
  const creds = new Map<string, Promise<SigningCredential>>();
  const outcome = new Map<string, { signedXml: string } | { failure: string }>();
  try {
    for (const doc of rows) {
      if (doc.signed) continue;
      try {
        let pending = creds.get(doc.certificate_id);
        if (!pending) {
          // the not-deleted check was made by the read of the documents
          pending = credentials.get(doc.certificate_id, { seenLive: doc.certificate_live });
          creds.set(doc.certificate_id, pending);
        }
        const credential = await pending.catch((err: unknown) => {
          throw err instanceof UnusableCertificateError ? new CannotSign(err.message) : err;
        });
        let caf = cafs.get(doc.caf_id);
        if (!caf) {
          caf = deps.cafs
            ? deps.cafs.get(doc.caf_id, () => loadCaf(db, deps.keys, doc.caf_id))
            : loadCaf(db, deps.keys, doc.caf_id);
          cafs.set(doc.caf_id, caf);
        }
        const opened = await caf;
        try {
          outcome.set(doc.id, {
            signedXml: signStoredDocument(doc.tipo_dte, doc.document, {
              caf: opened,
              credential,
              timestamp: now,
            }),
          });
        } catch (err) {
          // the engine's ServiceErrors (expired certificate or CAF, folio outside the CAF, ...)
          throw new CannotSign((err as Error).message);
        }
      } catch (err) {
        if (!(err instanceof CannotSign)) throw err;
        outcome.set(doc.id, { failure: err.message });
      }
    }
  } finally {
    // kept CAFs are wiped by OpenedCafs when they leave it
    if (!deps.cafs)
      for (const caf of cafs.values())
        await caf.then((c) => (c.rsaPrivateKeyPem = '')).catch(() => undefined);
  }

  const known = cmds.filter((c) => docs.has(c.dte_id));
  // the messages of every document with an outcome, built before the statement that writes only
  // those of the documents it claimed and found unsigned
  const updates: { id: string; xml: string }[] = [];
  const entries: PipelineOutboxEntry[] = [];
  // the `signed` records, which the statement applies itself (own-status-write)
  const ownStatuses: DteStatusValue[] = [];
  cmds.forEach((cmd, i) => {
    const doc = docs.get(cmd.dte_id);
    const done = doc && outcome.get(doc.id);
    if (!doc || !done) return;
    const ref = {
      id: doc.id,
      organizationId: doc.organization_id,
      siiEnv: doc.sii_env,
      tipoDte: doc.tipo_dte,
      folio: doc.folio,
    };
    const carried = correlationHeaders(headers?.[i], doc.id);
    const withHeaders = <E extends PipelineOutboxEntry>(e: E): E =>
      carried ? { ...e, headers: carried } : e;
    if ('failure' in done) {
      entries.push(
        withHeaders(
          statusChangeEntry(ref, {
            siiStatus: 'emision_fallida',
            glosa: `No se pudo firmar: ${done.failure}`,
            observedAt: now,
            source: 'signer',
          }),
        ),
      );
      return;
    }
    updates.push({ id: doc.id, xml: done.signedXml });
    const status = statusChangeEntry(ref, { siiStatus: 'signed', observedAt: now, source: 'signer' });
    ownStatuses.push(status.payload);
    entries.push(
      withHeaders({
        topic: PIPELINE_TOPICS.signed,
        schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.signed],
        key: signedKey(doc.company_id, doc.sii_env),
        payload: {
          event_id: randomUUID(),
          dte_id: doc.id,
          organization_id: doc.organization_id,
          company_id: doc.company_id,
          rut_emisor: doc.rut_emisor,
          sii_env: doc.sii_env,
          tipo_dte: doc.tipo_dte,
          folio: Number(doc.folio),
          certificate_id: doc.certificate_id,
          signed_at: now.toISOString(),
        },
      }),
      withHeaders(status),
    );
  });

  // ONE statement, atomic on its own (no BEGIN/COMMIT round trips): it claims the event ids,
  // locks (in id order) the documents of the claimed commands, stores the signed XMLs of those
  // still unsigned with their `signed` status and its event in the feed (own-status-write: the
  // projector has nothing to do for them) and writes their outbox messages (each message names
  // its document in payload.dte_id). The claimed event ids and the locked rows (signed or not
  // when locked) come back, and say what happened to each command.
  const own = ownStatusWriteSql(ownStatuses, {
    firstParam: 13,
    rows: 'fresh',
    replaces: statusesReplacedBy,
  });
  const outbox = outboxInsertSql(entries, {
    firstParam: 7,
    onlyIf: `(p::jsonb ->> 'dte_id')::uuid IN (SELECT id FROM fresh)`,
    headers: own.headers,
  });
  const claimRows: { id: string | null; signed: boolean | null; claimed: string | null }[] = known.length
    ? await db.query(
        `WITH claimed AS (
           INSERT INTO processed_events (consumer, event_id) SELECT $1, e FROM unnest($2::text[]) AS e
           ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id
         ), locked AS MATERIALIZED (
           SELECT id, signed_xml IS NOT NULL AS signed, sii_status, observed_at FROM dtes
            WHERE id IN (SELECT v.d FROM unnest($2::text[], $3::uuid[]) AS v(e, d)
                           JOIN claimed ON claimed.event_id = v.e)
            ORDER BY id FOR UPDATE
         ), fresh AS (
           SELECT id, sii_status, observed_at FROM locked WHERE NOT signed
         ), ${own.ctes}, stored AS (
           UPDATE dtes SET signed_xml = v.xml, signed_at = $6, ${own.set('m')}
             FROM unnest($4::uuid[], $5::text[]) AS v(id, xml) LEFT JOIN own_moved m ON m.dte_id = v.id
            WHERE dtes.id = v.id AND dtes.id IN (SELECT id FROM fresh) AND dtes.signed_xml IS NULL
         ), written AS (
           ${outbox.sql}
         )
         SELECT NULL::uuid AS id, NULL::boolean AS signed, event_id AS claimed FROM claimed
         UNION ALL
         SELECT id, signed, NULL FROM locked`,
        [
          SIGNER_CONSUMER,
          known.map((c) => c.event_id),
          known.map((c) => c.dte_id),
          updates.map((u) => u.id),
          updates.map((u) => u.xml),
          now,
          ...outbox.params,
          ...own.params,
        ],
      )
    : [];
  const claimed = new Set(claimRows.flatMap((r) => (r.claimed === null ? [] : [r.claimed])));
  const signedWhenLocked = new Set(claimRows.flatMap((r) => (r.id !== null && r.signed ? [r.id] : [])));
  return cmds.map((cmd): SignResult => {
    const doc = docs.get(cmd.dte_id);
    if (!doc) {
      // the outbox commits the command with its document: this is another database's command
      deps.logger.warn({ dteId: cmd.dte_id, eventId: cmd.event_id }, 'signer: unknown document; skipped');
      return 'unknown_document';
    }
    if (!claimed.has(cmd.event_id)) return 'duplicate';
    const done = outcome.get(doc.id);
    // signed when read, or when locked: signed before
    if (!done || signedWhenLocked.has(doc.id)) return 'already_signed';
    if ('failure' in done) {
      deps.logger.warn(
        { dteId: doc.id, reason: done.failure },
        'signer: document cannot be signed (emision_fallida)',
      );
      return 'failed';
    }
    return 'signed';
  });
}

/**
 * `cmds` cut, in order, into runs in which no document appears twice (a run ends before a
 * document of it comes again): each run is one statement, whose messages are gated per document.
 */
function runsWithoutRepeats(cmds: EmitDteCommand[]): EmitDteCommand[][] {
  const runs: EmitDteCommand[][] = [[]];
  let seen = new Set<string>();
  for (const c of cmds) {
    if (seen.has(c.dte_id)) {
      runs.push([]);
      seen = new Set();
    }
    seen.add(c.dte_id);
    runs[runs.length - 1]!.push(c);
  }
  return runs;
}

export interface Signer {
  consumer: AvroConsumer;
  stop(): Promise<void>;
}

/** Starts consuming dte.commands (group `<prefix>signer`). */
export async function startSigner(
  deps: SignerDeps & { messaging: Messaging; concurrency?: number },
): Promise<Signer> {
  const credentials =
    deps.credentials ??
    new StoredCredentials({ db: deps.dataSource, keys: deps.keys, now: () => Date.now() });
  const handlerDeps: SignerDeps = { ...deps, credentials, cafs: deps.cafs ?? new OpenedCafs() };
  const consumer = await deps.messaging.createConsumer({
    groupId: deps.messaging.topic(SIGNER_CONSUMER),
    topics: [PIPELINE_TOPICS.commands],
    fromBeginning: true,
    partitionsConsumedConcurrently: deps.concurrency ?? 3,
    // under load a fetch waits up to 100 ms for 16 KiB, so a batch (one transaction) holds more
    // and the broker answers 10 fetches a second, not 20 (each ~1 ms of its CPU); when idle the
    // consumer long-polls (@dte/messaging idleWaitTimeInMs) and a command is fetched at once
    minBytes: 16 * 1024,
    maxWaitTimeInMs: 100,
    // a redelivered command finds its claim (processed_events)
    commitIntervalMs: PIPELINE_COMMIT_INTERVAL_MS,
  });
  // one transaction per fetched batch of a partition
  await consumer.runBatch<EmitDteCommand>(async (msgs) => {
    const live = msgs.filter((msg) => msg.value !== null);
    const results = await signCommands(
      handlerDeps,
      live.map((msg) => msg.value as EmitDteCommand),
      live.map((msg) => msg.headers),
    );
    // x-request-id: the api request that issued the document (Kafka header set by its outbox)
    if (deps.logger.isLevelEnabled('debug')) {
      live.forEach((msg, i) =>
        deps.logger.debug(
          { dteId: msg.value?.dte_id, requestId: msg.headers['x-request-id'], result: results[i] },
          'signer: command handled',
        ),
      );
    }
  });
  return {
    consumer,
    async stop() {
      await consumer.disconnect();
    },
  };
}
