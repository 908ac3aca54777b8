/**
 * The purchases inbox (spec: GET /recepcion; scopes recepcion:read / recepcion:write). The rules
 * live in @dte/reception; this file only mounts them:
 *
 * - `GET /recepcion` query cedida (only `true`), page (integer >= 1), pageSize (integer 1-500) →
 *   `{documentos, total}`; anything else `400 recepcion.query_invalid`;
 * - `GET /recepcion/:id`, `GET /recepcion/:id/xml` (the received DTE as it came);
 * - `POST /recepcion/intercambio`: an EnvioDTE (or one lone DTE) another issuer sent us, raw XML
 *   (`Content-Type: application/xml`); read safely and verified document by document on a worker thread (each CAF's FRMA with the
 *   environment's SII keys, SII_CAF_KEYS_FILE; `429 rate_limit` when files already wait): the
 *   verified DTEs are stored, the others listed in `rechazados`, and the exchange reply
 *   (RespuestaDTE / RecepcionEnvio, each document with its EstadoRecepDTE) is signed, stored and
 *   queued for the supplier (`correo_emisor` query, else the DTEs' CorreoEmisor); a file refused
 *   whole (not XML, the envelope's signature, another company's, every DTE refused) answers
 *   `400 validation_failed` with `detail.motivo` and is stored nowhere (an envelope refused whole
 *   is still answered: `detail.respuesta_id`, `GET /recepcion/respuestas/:respuestaId`); once stored, the SII
 *   register is asked each DTE's reception date (consultarFechaRecepcionSii) for the deadline;
 * - `GET /recepcion/:id/respuesta` (`tipo` recepcion, the default, or resultado) and
 *   `GET /recepcion/:id/recibo`: the signed exchange replies that answer the document, ISO-8859-1;
 * - `POST /recepcion/:id/eventos` `{accion: ACD|ERM|RCD|RFP|RFT, confirmar: true}`: registered at
 *   the SII's register (ingresarAceptacionReclamoDoc); irreversible, so `confirmar: true` is
 *   required; a claim of a document the SII shows as transferred also needs `forzar: true`
 *   (`409 recepcion.rar_cedible_warning`, requiresOverride). A refusal of the register
 *   (out of the window, not the receiver, …) answers its code and changes nothing.
 */
import {
  answerReceivedFile,
  answerRefusedEnvelope,
  EnvelopeRefused,
  exchangeAddresses,
  exchangeReplyById,
  exchangeReplyXml,
  getInboxRow,
  inboxXml,
  listInbox,
  parseSiiDateTime,
  readReceivedEnvelopeOffThread,
  ReceptionRefused,
  ReceptionUnavailable,
  setReceptionDate,
  showInboxRow,
  storeReceived,
  DEFAULT_XML_LIMITS,
  type ReceivedDocument,
  type ReceivedEnvelope,
  checkEventoBody,
  inboxScopeOf,
  parseRecepcionQuery,
  queryInvalid,
  registerInboxEvento,
  siiClientOf,
} from '@dte/reception';
import { xmlMediaType } from '@dte/engine';
import type { Context } from 'koa';
import { loadSigningCredential, resolveActiveCertificate } from '@dte/certificates';
import type { ApiDeps, Principal, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { readRaw } from '../http/json-body';
import { principalOf } from './route-kit';

const scopeOf = inboxScopeOf;

async function companyOf(deps: ApiDeps, p: Principal): Promise<{ id: string; rut: string }> {
  const rows: { id: string; rut: string }[] = await deps.dataSource.query(
    `SELECT id, rut FROM companies WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY created_at LIMIT 2`,
    [p.organizationId, p.companyId],
  );
  if (rows.length !== 1) throw new ApiError('empresa.not_found', 'The credential names no single company.');
  return rows[0]!;
}

/**
 * The SII's CAF-signing keys of the credential's environment (SII_CAF_KEYS_FILE), by IDK, as
 * reception verifies each received CAF's FRMA with them; none configured: an empty map, so every
 * received file is refused `caf_invalido` rather than stored unverified.
 */
function siiKeysOf(deps: ApiDeps, env: 'cert' | 'prod'): Record<string, string> {
  return Object.fromEntries((deps.config.siiCafKeys?.[env] ?? []).map((k) => [String(k.idk), k.pem]));
}

export function recepcionRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const db = deps.dataSource;
  const row404 = async (ctx: Context) => {
    const row = await getInboxRow(db, scopeOf(principalOf(ctx)), String(ctx.params.id));
    if (!row) throw new ApiError('recepcion.no_encontrado', 'No such document in the purchases inbox.');
    return row;
  };
  /**
   * Best effort, after the file is stored: the SII's reception date of each DTE (the start of the
   * 8-day window) from the register's consultarFechaRecepcionSii; unknown stays null (the next
   * RCV sync brings it), and no SII failure refuses a file already verified and stored.
   */
  const askReceptionDates = async (p: Principal, ids: string[], docs: ReceivedDocument[]) => {
    const wanted = docs
      .map((d, i) => ({ d, id: ids[i]! }))
      .filter(({ d }) => [33, 34, 43].includes(d.tipoDte));
    if (wanted.length === 0 || wanted.length > 50) return;
    try {
      const cert = await resolveActiveCertificate(db, p.organizationId, undefined, now(), p.companyId);
      const session = siiClientOf(deps).session(await loadSigningCredential(db, deps.keys, cert.id));
      for (const { d, id } of wanted) {
        const text = await session.consultarFechaRecepcionSii({
          env: p.environment,
          rutEmisor: d.rutEmisor,
          tipoDoc: d.tipoDte,
          folio: d.folio,
          timeoutMs: 5000,
        });
        const at = parseSiiDateTime(text);
        if (at) await setReceptionDate(db, id, at);
      }
    } catch (err) {
      deps.logger.warn({ err }, 'reception date of a received DTE not asked to the SII');
    }
  };
  /**
   * The RespuestaDTE / RecepcionEnvio of a received file, signed with the company's current
   * certificate and queued for the supplier; null (logged) when the company has no usable
   * certificate or the reply cannot be signed: the documents stay stored, and the answer says
   * `respuesta: null`.
   */
  const answerFile = async (
    p: Principal,
    company: { id: string; rut: string },
    file: ReceivedEnvelope | EnvelopeRefused,
    storedIds: (string | null)[],
    query: Record<string, unknown>,
    docs: ReceivedDocument[],
  ): Promise<{ id: string; codEnvio: number; estados?: number[] } | null> => {
    let credential;
    try {
      const cert = await resolveActiveCertificate(db, p.organizationId, undefined, now(), p.companyId);
      credential = await loadSigningCredential(db, deps.keys, cert.id);
    } catch (err) {
      deps.logger.warn({ err }, 'exchange reply not built: no usable certificate');
      return null;
    }
    const given = typeof query.correo_emisor === 'string' ? query.correo_emisor : undefined;
    const nombre = typeof query.nombre_archivo === 'string' ? query.nombre_archivo : undefined;
    const setId = file instanceof EnvelopeRefused ? file.envelope.setId : file.setId;
    const c = {
      organizationId: p.organizationId,
      companyId: company.id,
      env: p.environment,
      rut: company.rut,
    };
    const opts = {
      credential,
      now: now(),
      nmbEnvio: (nombre ?? `${setId ?? 'DTE'}.xml`).slice(0, 80),
      correos: exchangeAddresses([given, ...docs.map((d) => d.correoEmisor)]),
    };
    try {
      return file instanceof EnvelopeRefused
        ? await answerRefusedEnvelope(db, c, file, opts)
        : await answerReceivedFile(db, c, file, storedIds, opts);
    } catch (err) {
      // the documents are stored: a reply that cannot be signed (an expired certificate) is logged
      deps.logger.warn({ err }, 'exchange reply not built');
      return null;
    }
  };
  const replyDownload =
    (kind: 'recepcion' | 'resultado' | 'recibo', what: string) => async (ctx: Context) => {
      const p = principalOf(ctx);
      await row404(ctx);
      const reply = await exchangeReplyXml(db, scopeOf(p), String(ctx.params.id), kind);
      if (!reply)
        throw new ApiError('recepcion.no_encontrado', `No ${what} has been built for this document.`);
      // the bytes are ISO-8859-1, as the XML declaration in them says
      ctx.type = 'application/xml; charset=ISO-8859-1';
      ctx.set('Content-Disposition', `attachment; filename="${kind}-${String(ctx.params.id)}.xml"`);
      ctx.body = reply.xml;
    };
  return [
    {
      method: 'get',
      path: '/recepcion',
      operationId: 'listRecepcion',
      summary: 'Purchases inbox: supplier documents with the legal 8-day deadline and the cesión block',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:read',
      query: {
        cedida: {
          description: 'only `true`: documents the SII shows as transferred',
          schema: { type: 'string', enum: ['true'] },
        },
        page: { description: 'integer >= 1, default 1', schema: { type: 'integer', minimum: 1 } },
        pageSize: {
          description: 'integer 1-500, default 50',
          schema: { type: 'integer', minimum: 1, maximum: 500 },
        },
      },
      responses: { 200: { description: '{documentos, total}', schema: 'recepcion-list.schema.json' } },
      errors: ['recepcion.query_invalid'],
      handler: async (ctx) => {
        const q = parseRecepcionQuery(ctx.query as Record<string, unknown>);
        ctx.body = await listInbox(db, scopeOf(principalOf(ctx)), q, now());
      },
    },
    {
      method: 'get',
      path: '/recepcion/:id',
      operationId: 'getRecepcion',
      summary: 'One document of the purchases inbox',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:read',
      responses: { 200: { description: 'the document', schema: 'recepcion-documento.schema.json' } },
      errors: ['recepcion.no_encontrado'],
      handler: async (ctx) => {
        ctx.body = showInboxRow(await row404(ctx), now());
      },
    },
    {
      method: 'get',
      path: '/recepcion/:id/xml',
      operationId: 'getRecepcionXml',
      summary: 'The received DTE as it came (documents received by intercambio only)',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:read',
      responses: { 200: { description: 'the DTE', contentType: 'application/xml' } },
      errors: ['recepcion.no_encontrado'],
      handler: async (ctx) => {
        const xml = await inboxXml(db, scopeOf(principalOf(ctx)), String(ctx.params.id));
        if (!xml) throw new ApiError('recepcion.no_encontrado', 'No received XML for this document.');
        ctx.type = xmlMediaType(xml);
        ctx.body = xml;
      },
    },
    {
      method: 'post',
      path: '/recepcion/intercambio',
      operationId: 'receiveIntercambio',
      summary:
        'Receive an EnvioDTE (or one DTE) another issuer sent: raw XML body, read without DTD or entities, each DTE signature, TED and CAF (SII signature) verified on a worker thread; the verified DTEs stored, the others listed in rechazados, and the signed exchange reply (RespuestaDTE) stored and mailed to the supplier',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:write',
      headers: { 'Content-Type': 'application/xml (or text/xml)' },
      query: {
        correo_emisor: {
          description:
            "the supplier's exchange address the reply is mailed to (the sender of the mail that brought the file); default: the DTEs' CorreoEmisor",
          schema: { type: 'string', maxLength: 80 },
        },
        nombre_archivo: {
          description: 'the received file name (NmbEnvio of the reply); default: the SetDTE ID',
          schema: { type: 'string', maxLength: 80 },
        },
      },
      responses: {
        201: {
          description:
            '{documentos, rechazados, respuesta}: the stored documents, the refused ones, the reply',
          schema: 'recepcion-intercambio.schema.json',
        },
      },
      errors: ['validation_failed', 'rate_limit'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const company = await companyOf(deps, p);
        const refuse = (motivo: string, message: string, documento?: unknown, respuestaId?: string) =>
          new ApiError('validation_failed', `The received file was refused (${motivo}): ${message}`, {
            issues: [{ path: 'xml', message: `${motivo}: ${message}` }],
            detail: {
              motivo,
              ...(documento ? { documento } : {}),
              ...(respuestaId ? { respuesta_id: respuestaId } : {}),
            },
          });
        let raw: Buffer;
        try {
          raw = await readRaw(ctx, DEFAULT_XML_LIMITS.maxBytes);
        } catch {
          throw refuse('tamano_excedido', `the file is larger than ${DEFAULT_XML_LIMITS.maxBytes} bytes`);
        }
        if (!ctx.is('application/xml', 'text/xml', '+xml'))
          throw refuse('tipo_contenido', 'send the XML with Content-Type: application/xml');
        let envelope;
        try {
          envelope = await readReceivedEnvelopeOffThread(raw, {
            rutReceptor: company.rut,
            siiPublicKeys: siiKeysOf(deps, p.environment),
          });
        } catch (err) {
          // an envelope refused whole is still answered (EstadoRecepEnv 2 or 3)
          if (err instanceof EnvelopeRefused) {
            const answered = await answerFile(p, company, err, [], ctx.query, []);
            throw refuse(err.reason, err.message, undefined, answered?.id);
          }
          if (err instanceof ReceptionRefused) throw refuse(err.reason, err.message, err.documento);
          if (err instanceof ReceptionUnavailable && err.reason === 'recepcion_ocupada')
            throw new ApiError('rate_limit', `The received file was not verified now: ${err.message}`, {
              detail: { retryAfterSec: 5, motivo: err.reason },
            });
          if (err instanceof ReceptionUnavailable) throw refuse(err.reason, err.message);
          throw err;
        }
        const firstRefused = envelope.results.find((r) => !r.ok);
        if (envelope.results.every((r) => !r.ok) && firstRefused && !firstRefused.ok) {
          // nothing stored; the reply still answers each document (EstadoRecepDTE)
          const answered = await answerFile(
            p,
            company,
            envelope,
            envelope.results.map(() => null),
            ctx.query,
            [],
          );
          const r = firstRefused.refusal;
          throw refuse(r.reason, r.message, r.documento, answered?.id);
        }
        const docs = envelope.results.flatMap((r) => (r.ok ? [r.document] : []));
        const ids = await storeReceived(
          db,
          { organizationId: p.organizationId, companyId: company.id, env: p.environment },
          docs,
        );
        const storedIds: (string | null)[] = [];
        let k = 0;
        for (const r of envelope.results) storedIds.push(r.ok ? ids[k++]! : null);
        const respuesta = await answerFile(p, company, envelope, storedIds, ctx.query, docs);
        await askReceptionDates(p, ids, docs);
        const scope = scopeOf(p);
        const t = now();
        const documentos = [];
        for (const id of ids) documentos.push(showInboxRow((await getInboxRow(db, scope, id))!, t));
        const rechazados = envelope.results.flatMap((r) =>
          r.ok
            ? []
            : [
                {
                  indice: r.index,
                  tipo_dte: r.ref.tipoDte,
                  folio: r.ref.folio,
                  rut_emisor: r.ref.rutEmisor,
                  motivo: r.refusal.reason,
                  mensaje: r.refusal.message,
                  estado_recepcion: respuesta?.estados?.[r.index] ?? null,
                },
              ],
        );
        ctx.status = 201;
        ctx.body = {
          documentos,
          rechazados,
          respuesta: respuesta ? { id: respuesta.id, cod_envio: respuesta.codEnvio } : null,
        };
      },
    },
    {
      method: 'get',
      path: '/recepcion/:id/respuesta',
      operationId: 'getRecepcionRespuesta',
      summary:
        'The signed exchange reply (RespuestaDTE) sent to the supplier: tipo=recepcion (default: the envelope and each document received) or tipo=resultado (the commercial approval after an acuse or claim)',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:read',
      query: {
        tipo: {
          description: 'recepcion (default) or resultado',
          schema: { type: 'string', enum: ['recepcion', 'resultado'] },
        },
      },
      responses: { 200: { description: 'RespuestaDTE (ISO-8859-1)', contentType: 'application/xml' } },
      errors: ['recepcion.no_encontrado', 'recepcion.query_invalid'],
      handler: async (ctx) => {
        const tipo = ctx.query.tipo ?? 'recepcion';
        if (tipo !== 'recepcion' && tipo !== 'resultado')
          throw queryInvalid('tipo admits recepcion or resultado.');
        await replyDownload(tipo, tipo === 'recepcion' ? 'reception reply' : 'result reply')(ctx);
      },
    },
    {
      method: 'get',
      path: '/recepcion/respuestas/:respuestaId',
      operationId: 'getRecepcionRespuestaById',
      summary:
        'One signed exchange reply by its id: the RespuestaDTE of a file refused whole (detail.respuesta_id of the 400 answer)',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:read',
      responses: { 200: { description: 'RespuestaDTE (ISO-8859-1)', contentType: 'application/xml' } },
      errors: ['recepcion.no_encontrado'],
      handler: async (ctx) => {
        const reply = await exchangeReplyById(db, scopeOf(principalOf(ctx)), String(ctx.params.respuestaId));
        if (!reply) throw new ApiError('recepcion.no_encontrado', 'No such exchange reply.');
        ctx.type = 'application/xml; charset=ISO-8859-1';
        ctx.set(
          'Content-Disposition',
          `attachment; filename="respuesta-${String(ctx.params.respuestaId)}.xml"`,
        );
        ctx.body = reply.xml;
      },
    },
    {
      method: 'get',
      path: '/recepcion/:id/recibo',
      operationId: 'getRecepcionRecibo',
      summary:
        'The signed receipt of goods or services (EnvioRecibos, Ley 19.983) sent to the supplier after an ERM',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:read',
      responses: { 200: { description: 'EnvioRecibos (ISO-8859-1)', contentType: 'application/xml' } },
      errors: ['recepcion.no_encontrado'],
      handler: replyDownload('recibo', 'receipt (EnvioRecibos)'),
    },
    {
      method: 'post',
      path: '/recepcion/:id/eventos',
      operationId: 'registerRecepcionEvento',
      summary:
        'Acknowledge (ACD, ERM) or claim (RCD, RFP, RFT) a supplier document at the SII register; irreversible: needs confirmar true',
      tag: 'recepcion',
      auth: 'bearer',
      scope: 'recepcion:write',
      body: { kind: 'json', schema: 'recepcion-evento.schema.json' },
      responses: {
        200: {
          description: 'the document with the recorded event',
          schema: 'recepcion-documento.schema.json',
        },
      },
      errors: [
        'recepcion.no_encontrado',
        'recepcion.evento_invalid_input',
        'recepcion.rar_tipo_no_soportado',
        'recepcion.rar_evento_rechazado',
        'recepcion.rar_cedible_warning',
        'sii_unavailable',
      ],
      handler: async (ctx) => {
        const body = checkEventoBody(ctx.state.body);
        ctx.body = await registerInboxEvento(deps, principalOf(ctx), String(ctx.params.id), body, now());
      },
    },
  ];
}
