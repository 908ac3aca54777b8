/**
 * The signer: consumes dte.commands and, for each document, stamps the TED with the CAF's key
 * and signs it with the company's certificate (both opened in memory only), then in ONE
 * transaction: claims the command's event id (processed_events, consumer `signer`), stores
 * signed_xml/signed_at (only if the row has none) and writes dte.signed and a dte-status
 * `signed` to the outbox. A replay of the command finds its claim and does nothing, so a
 * document is never signed twice and its stored XML never changes; a crash before the commit
 * leaves nothing, and the redelivered command does the work again.
 *
 * A document that cannot be signed for a reason retrying will not cure (the certificate or the
 * CAF key does not open, the certificate expired, the CAF does not cover the folio...) gets the
 * requiere_accion outcome `emision_fallida` with the reason as glosa, in the same kind of
 * transaction, and the consumer moves on: no crash loop. Failures that may pass (database
 * down, master key unavailable) throw, and the command is redelivered.
 */
import { claimEvent, statusChangeEntry, writeOutbox } from '@dte/database';
import { stampAndSignDte, type Caf, type DteDocument } from '@dte/engine';
import {
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
  signed_xml: string | null;
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

/** Handles one command (exported for the consumer and for tests). */
export async function signCommand(deps: SignerDeps, cmd: EmitDteCommand): Promise<SignResult> {
  const db = deps.dataSource;
  const now = (deps.clock ?? (() => new Date()))();
  const rows: DocRow[] = await db.query(
    `SELECT id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id, rut_emisor,
            document, signed_xml FROM dtes WHERE id = $1`,
    [cmd.dte_id],
  );
  const doc = rows[0];
  if (!doc) {
    // the outbox commits the command with its document: this is another database's command
    deps.logger.warn({ dteId: cmd.dte_id, eventId: cmd.event_id }, 'signer: unknown document; skipped');
    return 'unknown_document';
  }
  const ref = {
    id: doc.id,
    organizationId: doc.organization_id,
    siiEnv: doc.sii_env,
    tipoDte: doc.tipo_dte,
    folio: doc.folio,
  };

  let signedXml: string | undefined;
  let failure: string | undefined;
  if (doc.signed_xml === null) {
    try {
      const credentials =
        deps.credentials ?? new StoredCredentials({ db, keys: deps.keys, now: () => Date.now() });
      const credential = await credentials.get(doc.certificate_id).catch((err: unknown) => {
        throw err instanceof UnusableCertificateError ? new CannotSign(err.message) : err;
      });
      const caf = await loadCaf(db, deps.keys, doc.caf_id);
      try {
        signedXml = stampAndSignDte(doc.document, { caf, credential, timestamp: now });
      } catch (err) {
        // the engine's ServiceErrors (expired certificate or CAF, folio outside the CAF, ...)
        throw new CannotSign((err as Error).message);
      } finally {
        caf.rsaPrivateKeyPem = '';
      }
    } catch (err) {
      if (!(err instanceof CannotSign)) throw err;
      failure = err.message;
    }
  }

  return db.transaction(async (m) => {
    if (!(await claimEvent(m, SIGNER_CONSUMER, cmd.event_id))) return 'duplicate';
    const locked: { signed_xml: string | null }[] = await m.query(
      'SELECT signed_xml FROM dtes WHERE id = $1 FOR UPDATE',
      [doc.id],
    );
    if (locked[0]?.signed_xml != null) return 'already_signed';
    if (failure !== undefined) {
      await writeOutbox(m, [
        statusChangeEntry(ref, {
          siiStatus: 'emision_fallida',
          glosa: `No se pudo firmar: ${failure}`,
          observedAt: now,
          source: 'signer',
        }),
      ]);
      deps.logger.warn(
        { dteId: doc.id, reason: failure },
        'signer: document cannot be signed (emision_fallida)',
      );
      return 'failed';
    }
    await m.query('UPDATE dtes SET signed_xml = $2, signed_at = $3 WHERE id = $1 AND signed_xml IS NULL', [
      doc.id,
      signedXml,
      now,
    ]);
    await writeOutbox(m, [
      {
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
      },
      statusChangeEntry(ref, { siiStatus: 'signed', observedAt: now, source: 'signer' }),
    ]);
    return 'signed';
  });
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
  const handlerDeps: SignerDeps = { ...deps, credentials };
  const consumer = await deps.messaging.createConsumer({
    groupId: deps.messaging.topic(SIGNER_CONSUMER),
    topics: [PIPELINE_TOPICS.commands],
    fromBeginning: true,
    partitionsConsumedConcurrently: deps.concurrency ?? 3,
  });
  await consumer.run<EmitDteCommand>(async (msg) => {
    if (msg.value === null) return;
    const result = await signCommand(handlerDeps, msg.value);
    // x-request-id: the api request that issued the document (Kafka header set by its outbox)
    deps.logger.info(
      { dteId: msg.value.dte_id, requestId: msg.headers['x-request-id'], result },
      'signer: command handled',
    );
  });
  return {
    consumer,
    async stop() {
      await consumer.disconnect();
    },
  };
}
