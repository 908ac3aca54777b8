/**
 * The exchange replies as stored and mailed (`exchange_replies`): built by exchange-replies.ts,
 * signed with the receiving company's certificate, stored as the bytes sent, linked to the inbox
 * documents they answer, and queued for the supplier's exchange address (the mail itself is
 * sent by @dte/receptor-delivery's `ExchangeReplyDelivery`, with retries).
 *
 * - `answerReceivedFile`: the RespuestaDTE / RecepcionEnvio of one received file, every document
 *   with its own EstadoRecepDTE (a refused one is answered, not stored in the inbox);
 * - `answerRegisterEvent`: after the SII register recorded an acuse or a claim of a document
 *   received by intercambio: ACD → ResultadoDTE 0 (accepted), RFP → 1 (accepted with
 *   discrepancies: goods partly missing), RCD/RFT → 2 (rejected); ERM → EnvioRecibos;
 * - `exchangeReplyXml`: the last reply of a kind for an inbox document (the download).
 */
import type { SigningCredential } from '@dte/engine';

import {
  buildEnvioRecibos,
  buildRespuestaRecepcion,
  buildRespuestaResultado,
  type EstadoRecepDte,
  type EstadoResultadoDte,
} from './exchange-replies';
import type { RegisterAction } from './estados';
import type { InboxScope } from './inbox';
import type { EnvelopeRefused, ReceivedEnvelope } from './intercambio';
import type { RefusalReason } from './safe-xml';
import type { SyncDb } from './rcv-sync';

export type ExchangeReplyKind = 'recepcion' | 'resultado' | 'recibo';

type Queryable = Pick<ReturnType<SyncDb['createQueryRunner']>, 'query'>;

export interface ReplyCompany {
  organizationId: string;
  companyId: string;
  env: 'cert' | 'prod';
  rut: string;
}

/** EstadoRecepDTE of a refused DTE (RespuestaEnvioDTE_v10.xsd's codes). */
export function estadoRecepDteOf(reason: RefusalReason): EstadoRecepDte {
  if (reason === 'firma_dte_invalida') return 1;
  if (reason === 'dte_para_otra_empresa') return 3;
  return 99;
}

/** Up to 5 addresses, each a plausible e-mail address of at most 80 characters (MailType). */
export function exchangeAddresses(list: (string | null | undefined)[]): string[] {
  const out: string[] = [];
  for (const raw of list) {
    const a = raw?.trim();
    if (a && a.length <= 80 && /^[^\s@<>,;]+@[^\s@<>,;]+\.[^\s@<>,;]+$/.test(a) && !out.includes(a))
      out.push(a);
  }
  return out.slice(0, 5);
}

async function nextNumber(db: Queryable): Promise<number> {
  const [r] = await db.query(`SELECT nextval('exchange_reply_numbers') AS n`);
  return Number(r.n);
}

async function insertReply(
  db: Queryable,
  c: ReplyCompany,
  r: {
    kind: ExchangeReplyKind;
    numero: number;
    codEnvio: number | null;
    rutDestino: string;
    documentoIds: string[];
    xml: Buffer;
    correos: string[];
    now: Date;
  },
): Promise<string> {
  const [row] = await db.query(
    `INSERT INTO exchange_replies (organization_id, company_id, sii_env, kind, numero, cod_envio, rut_destino,
        documento_ids, xml, correos, state, next_attempt_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], $9, $10::text[], $11, $12, $12, $12) RETURNING id`,
    [
      c.organizationId,
      c.companyId,
      c.env,
      r.kind,
      r.numero,
      r.codEnvio,
      r.rutDestino,
      r.documentoIds,
      r.xml,
      r.correos,
      r.correos.length > 0 ? 'pending' : 'sin_correo',
      r.now,
    ],
  );
  return row.id as string;
}

/**
 * The RespuestaDTE / RecepcionEnvio of one received file. `storedIds[i]` is the inbox id of the
 * i-th result when it was stored (null when refused). Answers the reply's id and CodEnvio.
 */
export async function answerReceivedFile(
  db: Queryable,
  c: ReplyCompany,
  envelope: ReceivedEnvelope,
  storedIds: (string | null)[],
  opts: { credential: SigningCredential; now: Date; nmbEnvio: string; correos: string[] },
): Promise<{ id: string; codEnvio: number; estados: EstadoRecepDte[] }> {
  const numero = await nextNumber(db);
  const codEnvio = numero;
  const estados = envelope.results.map(
    (r) => (r.ok ? 0 : estadoRecepDteOf(r.refusal.reason)) as EstadoRecepDte,
  );
  const xml = buildRespuestaRecepcion(
    {
      idRespuesta: numero,
      nmbEnvio: opts.nmbEnvio,
      fchRecep: opts.now,
      codEnvio,
      envioDteId: envelope.setId ?? 'DTE',
      ...(envelope.digest ? { digest: envelope.digest } : {}),
      rutEmisor: envelope.rutEmisor,
      rutReceptor: c.rut,
      estado: 0,
      documentos: envelope.results.map((r, i) => ({
        ...r.ref,
        estado: estados[i]!,
        ...(r.ok ? {} : { glosa: glosaOf(r.refusal.message) }),
      })),
    },
    { rutResponde: c.rut, rutRecibe: envelope.rutEmisor, credential: opts.credential, timestamp: opts.now },
  );
  const id = await insertReply(db, c, {
    kind: 'recepcion',
    numero,
    codEnvio,
    rutDestino: envelope.rutEmisor,
    documentoIds: storedIds.filter((x): x is string => !!x),
    xml,
    correos: opts.correos,
    now: opts.now,
  });
  return { id, codEnvio, estados };
}

/**
 * The RespuestaDTE / RecepcionEnvio of an envelope refused whole (EstadoRecepEnv 2, its
 * signature; 3, addressed to another company): no document was received, none is listed. Linked
 * to no inbox document: downloaded by its own id.
 */
export async function answerRefusedEnvelope(
  db: Queryable,
  c: ReplyCompany,
  refused: EnvelopeRefused,
  opts: { credential: SigningCredential; now: Date; nmbEnvio: string; correos: string[] },
): Promise<{ id: string; codEnvio: number }> {
  const numero = await nextNumber(db);
  const estado = refused.reason === 'firma_sobre_invalida' ? 2 : 3;
  const xml = buildRespuestaRecepcion(
    {
      idRespuesta: numero,
      nmbEnvio: opts.nmbEnvio,
      fchRecep: opts.now,
      codEnvio: numero,
      envioDteId: refused.envelope.setId ?? 'EnvioDTE',
      ...(refused.envelope.digest ? { digest: refused.envelope.digest } : {}),
      rutEmisor: refused.envelope.rutEmisor,
      rutReceptor: c.rut,
      estado,
      glosa: glosaOf(refused.message),
      documentos: [],
    },
    {
      rutResponde: c.rut,
      rutRecibe: refused.envelope.rutEmisor,
      credential: opts.credential,
      timestamp: opts.now,
    },
  );
  const id = await insertReply(db, c, {
    kind: 'recepcion',
    numero,
    codEnvio: numero,
    rutDestino: refused.envelope.rutEmisor,
    documentoIds: [],
    xml,
    correos: opts.correos,
    now: opts.now,
  });
  return { id, codEnvio: numero };
}

function glosaOf(message: string): string {
  // Latin-1 only (the reply is ISO-8859-1), at most 256 characters
  return message.replace(/[^\x20-\xFF]/g, ' ').slice(0, 256);
}

const RESULTADO_OF: Partial<Record<RegisterAction, EstadoResultadoDte>> = { ACD: 0, RFP: 1, RCD: 2, RFT: 2 };

/**
 * The reply an acuse or claim owes the supplier of a document received by intercambio (its
 * RecepcionEnvio gives the CodEnvio and the exchange addresses). Answers the reply's id, or null
 * for a document that did not come by intercambio (it has no sender to answer).
 */
export async function answerRegisterEvent(
  db: Queryable,
  c: ReplyCompany,
  doc: {
    id: string;
    tipo_dte: number | string;
    folio: number | string;
    fch_emis: string | null;
    rut_emisor: string;
    mnt_total: number | string;
  },
  accion: RegisterAction,
  opts: { credential: SigningCredential; now: Date; recinto?: string },
): Promise<{ id: string; kind: ExchangeReplyKind } | null> {
  const [recep] = await db.query(
    `SELECT cod_envio, correos FROM exchange_replies
      WHERE kind = 'recepcion' AND company_id = $1 AND sii_env = $2 AND documento_ids @> ARRAY[$3::uuid]
      ORDER BY created_at DESC LIMIT 1`,
    [c.companyId, c.env, doc.id],
  );
  if (!recep || !doc.fch_emis) return null;
  const ref = {
    tipoDte: Number(doc.tipo_dte),
    folio: Number(doc.folio),
    fchEmis: doc.fch_emis,
    rutEmisor: doc.rut_emisor,
    rutReceptor: c.rut,
    mntTotal: Number(doc.mnt_total),
  };
  const signer = {
    rutResponde: c.rut,
    rutRecibe: doc.rut_emisor,
    credential: opts.credential,
    timestamp: opts.now,
  };
  const numero = await nextNumber(db);
  let kind: ExchangeReplyKind;
  let xml: Buffer;
  if (accion === 'ERM') {
    kind = 'recibo';
    // where the goods were received: the event's recinto, else the company's address
    const [co] = await db.query(`SELECT direccion, comuna FROM companies WHERE id = $1`, [c.companyId]);
    const address = [co?.direccion, co?.comuna].filter((x) => typeof x === 'string' && x.trim()).join(', ');
    xml = buildEnvioRecibos(
      [{ ...ref, recinto: opts.recinto?.trim() || address || 'Casa matriz' }],
      signer,
      `SetRecibos${numero}`,
    );
  } else {
    const estado = RESULTADO_OF[accion];
    if (estado === undefined) return null;
    kind = 'resultado';
    xml = buildRespuestaResultado(
      { idRespuesta: numero, documentos: [{ ...ref, codEnvio: Number(recep.cod_envio), estado }] },
      signer,
    );
  }
  const id = await insertReply(db, c, {
    kind,
    numero,
    codEnvio: Number(recep.cod_envio),
    rutDestino: doc.rut_emisor,
    documentoIds: [doc.id],
    xml,
    correos: recep.correos ?? [],
    now: opts.now,
  });
  return { id, kind };
}

/** The last stored reply of `kind` answering inbox document `documentoId` within the scope. */
export async function exchangeReplyXml(
  db: Queryable,
  s: InboxScope,
  documentoId: string,
  kind: ExchangeReplyKind | ExchangeReplyKind[],
): Promise<{ xml: Buffer; kind: ExchangeReplyKind; state: string } | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(documentoId)) return undefined;
  const kinds = Array.isArray(kind) ? kind : [kind];
  const [row] = await db.query(
    `SELECT xml, kind, state FROM exchange_replies
      WHERE organization_id = $1 AND sii_env = $2 AND ($3::uuid IS NULL OR company_id = $3)
        AND documento_ids @> ARRAY[$4::uuid] AND kind = ANY($5::text[])
      ORDER BY created_at DESC, numero DESC LIMIT 1`,
    [s.organizationId, s.env, s.companyId, documentoId, kinds],
  );
  return row
    ? { xml: row.xml as Buffer, kind: row.kind as ExchangeReplyKind, state: row.state as string }
    : undefined;
}

/** One stored reply by its own id within the scope (a refused file's reply has no inbox document). */
export async function exchangeReplyById(
  db: Queryable,
  s: InboxScope,
  id: string,
): Promise<{ xml: Buffer; kind: ExchangeReplyKind; state: string } | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await db.query(
    `SELECT xml, kind, state FROM exchange_replies
      WHERE organization_id = $1 AND sii_env = $2 AND ($3::uuid IS NULL OR company_id = $3) AND id = $4`,
    [s.organizationId, s.env, s.companyId, id],
  );
  return row
    ? { xml: row.xml as Buffer, kind: row.kind as ExchangeReplyKind, state: row.state as string }
    : undefined;
}
