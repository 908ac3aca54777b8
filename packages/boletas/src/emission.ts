import {
  type BacklogGate,
  bodyHash,
  loadCompanyProfile,
  preloadedCompanyWithCertificates,
  type CompanyProfile,
  DTE_COLUMNS,
  type DteRow,
  emissionOutbox,
  emissionRefused,
  writeWithFolio,
  type NewDocument,
  idempotencyKeyOf,
  issueOrReplay,
} from '@dte/emission';
import { randomUUID } from 'node:crypto';
import {
  buildBoletaDocument,
  checkBoleta,
  checkBoletaFecha,
  normalizeRut,
  type BoletaDocument,
  type BoletaInput,
} from '@dte/engine';
import type { DataSource, EntityManager } from 'typeorm';
import { chargeDocuments } from '@dte/billing';
import { allocateFolios, type AllocatedFolio } from '@dte/folios';
import { chooseSigningCertificate, resolveSigningCertificate } from '@dte/certificates';
import { type Principal, productionIssueGate } from '@dte/tenancy';
import { ApiError } from '@dte/error-catalog';
import { enqueueOutbox, type OutboxEntry } from '@dte/pipeline';

/** Everything a boleta needs that does not depend on its body: company, certificate, gates. */
export interface BoletaIssuer {
  principal: Principal;
  company: CompanyProfile;
  certificateId: string;
  typeGate: (tipo: number) => void;
}

/** sii_env of the body, when sent, must be the key's (as on POST /dtes). */
export function checkSiiEnv(principal: Principal, body: unknown): void {
  const solicitado = body && typeof body === 'object' ? (body as Record<string, unknown>).sii_env : undefined;
  if ((solicitado === 'cert' || solicitado === 'prod') && solicitado !== principal.environment)
    throw new ApiError(
      'dte.sii_env_credential_mismatch',
      `The body asks for sii_env ${solicitado} but the API key is for ${principal.environment}.`,
      { detail: { solicitado, credencial: principal.environment } },
    );
}

export async function loadIssuer(
  db: DataSource,
  principal: Principal,
  certIdHeader: string | undefined,
  now: Date,
): Promise<BoletaIssuer> {
  if (!principal.companyId) throw new ApiError('forbidden', 'Emission needs an API key of a company.');
  // the company and its signers' current certificates came with the API key (route preload)
  const preloaded = preloadedCompanyWithCertificates(principal.preloaded);
  const company =
    preloaded?.company ?? (await loadCompanyProfile(db, principal.organizationId, principal.companyId));
  const gate = await productionIssueGate(db, principal.environment, company.id);
  // a boleta type the company may not issue in production: the catalog's boleta answer
  const typeGate = (tipo: number) => {
    try {
      gate(tipo);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'dte.type.prod_not_certified')
        throw new ApiError(
          'boleta.tipo_no_habilitado',
          `Type ${tipo} is not enabled for this company in production; nothing was issued.`,
          { detail: err.detail ?? { tipoDte: tipo } },
        );
      throw err;
    }
  };
  if (principal.environment === 'prod' && !company.resolucion.prod)
    throw new ApiError(
      'dte.production_resolucion_missing',
      'The company has no production SII resolution (number and date) on record; capture it before issuing in production.',
    );
  // a certificate of the company's signers only, as on POST /dtes
  const certId = certIdHeader?.trim() || undefined;
  const cert = preloaded
    ? chooseSigningCertificate(preloaded.certificates, certId, { path: 'dte', now })
    : await resolveSigningCertificate(db, principal.organizationId, certId, {
        path: 'dte',
        now,
        companyId: principal.companyId,
      });
  return { principal, company, certificateId: cert.id, typeGate };
}

/**
 * The checks of one boleta before any folio is taken: rut_emisor is the key's company, the type
 * passes the production gate, and the engine's rules (41 without taxable items, line amounts,
 * texts). Declared totals are ignored (derived).
 */
export function checkBoletaFor(issuer: BoletaIssuer, input: BoletaInput, now: Date): void {
  if (normalizeRut(input.rut_emisor) !== normalizeRut(issuer.company.rut))
    throw new ApiError(
      'emisor_rut_mismatch',
      `rut_emisor ${input.rut_emisor} is not the company of this API key.`,
      {
        detail: { rut_emisor: input.rut_emisor, expected: issuer.company.rut },
      },
    );
  issuer.typeGate(input.tipo_dte);
  checkBoleta(input);
  checkBoletaFecha(input.fecha_emision, now);
}

export interface BoletaRecord {
  idempotencyKey: string;
  bodyHash: string;
  body: unknown;
  batch?: { id: string; position: number };
  /** X-Request-Id of the POST that issued it (log correlation: dtes.request_id, Kafka headers) */
  requestId?: string;
}

/**
 * A boleta as a new document of the emission writers (folio-write.ts): its row's values, the
 * amounts from its built document's totals (checkBoleta's, already run by the build).
 */
function newBoleta(
  issuer: BoletaIssuer,
  input: BoletaInput,
  rec: BoletaRecord,
  document: BoletaDocument,
  id: string,
  now: Date,
): NewDocument {
  const t = document.Encabezado.Totales;
  return {
    id,
    organizationId: issuer.principal.organizationId,
    companyId: issuer.company.id,
    environment: issuer.principal.environment,
    tipoDte: input.tipo_dte,
    certificateId: issuer.certificateId,
    rutEmisor: issuer.company.rut,
    rutReceptor: input.rut_receptor ? normalizeRut(input.rut_receptor) : null,
    razonSocialReceptor: input.razon_social_receptor ?? '',
    fechaEmision: input.fecha_emision,
    amounts: { neto: t.MntNeto ?? 0, exento: t.MntExe ?? 0, iva: t.IVA ?? 0, total: t.MntTotal },
    input: rec.body,
    idempotencyKey: rec.idempotencyKey,
    bodyHash: rec.bodyHash,
    ...(rec.requestId ? { requestId: rec.requestId } : {}),
    now,
  };
}

/** Rows per INSERT (24 parameters each, under PostgreSQL's 65535). */
const ROWS_PER_INSERT = 500;

/**
 * Inside the caller's transaction, for one boleta or a whole batch: the folios from THE folio
 * allocator (allocateFolios: per type, in the given order), each boleta document, the `dtes` rows,
 * the dte.commands + dte-status `queued` outbox rows and the first feed rows, written with
 * multi-row INSERTs. Returns the rows in the given order. The pipeline then signs, sends (boleta
 * REST) and polls them like any document.
 */
export async function insertBoletas(
  m: EntityManager,
  issuer: BoletaIssuer,
  items: { input: BoletaInput; rec: BoletaRecord }[],
  now: Date,
): Promise<DteRow[]> {
  const { principal, company } = issuer;
  // the month's allowance before any folio: the whole batch fits, or 402 and nothing is taken
  await chargeDocuments(
    m,
    { organizationId: principal.organizationId, environment: principal.environment, now },
    items.length,
  );
  const folios: AllocatedFolio[] = new Array(items.length);
  const byTipo = new Map<number, number[]>();
  items.forEach((it, i) => byTipo.set(it.input.tipo_dte, [...(byTipo.get(it.input.tipo_dte) ?? []), i]));
  for (const [tipoDte, idxs] of byTipo) {
    const got = await allocateFolios(
      m,
      {
        organizationId: principal.organizationId,
        companyId: company.id,
        environment: principal.environment,
        tipoDte,
      },
      idxs.length,
      now,
    );
    idxs.forEach((i, k) => (folios[i] = got[k]!));
  }
  const prepared = items.map((it, i) => {
    const { folio, cafId } = folios[i]!;
    const document = buildBoletaDocument(it.input, { emisor: company.emisor, folio });
    const doc = newBoleta(issuer, it.input, it.rec, document, randomUUID(), now);
    const params: unknown[] = [
      doc.id,
      doc.organizationId,
      doc.companyId,
      doc.environment,
      doc.tipoDte,
      folio,
      cafId,
      doc.certificateId,
      doc.rutEmisor,
      doc.rutReceptor,
      doc.razonSocialReceptor,
      doc.fechaEmision,
      doc.amounts.neto,
      doc.amounts.exento,
      doc.amounts.iva,
      doc.amounts.total,
      JSON.stringify(doc.input),
      JSON.stringify(document),
      now,
      doc.idempotencyKey,
      doc.bodyHash,
      it.rec.batch?.id ?? null,
      it.rec.batch?.position ?? null,
      doc.requestId ?? null,
    ];
    return { doc, folio, cafId, params };
  });
  const rows: DteRow[] = [];
  for (let i = 0; i < prepared.length; i += ROWS_PER_INSERT) {
    const chunk = prepared.slice(i, i + ROWS_PER_INSERT);
    const params: unknown[] = [];
    const values = chunk.map((p) => {
      const b = params.length;
      params.push(...p.params);
      const $ = (n: number) => `$${b + n}`;
      return `(${[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18].map($).join(', ')}, 'queued', ${$(19)}, ${$(20)}, ${$(21)}, ${$(19)}, ${$(22)}, ${$(23)}, ${$(24)})`;
    });
    const inserted: DteRow[] = await m.query(
      `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
         rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
         monto_total, input, document, sii_status, observed_at, idempotency_key, body_hash, created_at,
         batch_id, batch_position, request_id)
       VALUES ${values.join(', ')}
       RETURNING ${DTE_COLUMNS}`,
      params,
    );
    const byId = new Map(inserted.map((r) => [r.id, r]));
    for (const p of chunk) rows.push(byId.get(p.doc.id)!);
  }
  const entries: OutboxEntry[] = [];
  const events: unknown[] = [];
  for (const p of prepared) {
    const out = emissionOutbox(p.doc, { folio: p.folio, cafId: p.cafId });
    entries.push(...out.entries);
    events.push(p.doc.id, out.queuedEventId);
  }
  await enqueueOutbox(m, entries);
  // the feed shows `queued` at once; the projector's later copy of the same event is a no-op
  for (let i = 0; i < events.length; i += 2 * ROWS_PER_INSERT) {
    const chunk = events.slice(i, i + 2 * ROWS_PER_INSERT);
    const values: string[] = [];
    for (let k = 0; k < chunk.length; k += 2)
      values.push(`($${k + 2}, $${k + 3}, 'queued', NULL, NULL, 'api', $1)`);
    await m.query(
      `INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at) VALUES ${values.join(', ')}`,
      [now, ...chunk],
    );
  }
  return rows;
}

/**
 * POST /boletas: Idempotency-Key (same key and body → the same boleta; another body →
 * idempotency_conflict, as POST /dtes: issueOrReplay), sii_env, company, gates, certificate, the
 * boleta's rules; then one transaction takes the folio and writes everything, the key's unique
 * index refusing a second document. Nothing is written and no folio used when a check fails.
 */
export async function emitBoleta(
  db: DataSource,
  principal: Principal,
  req: {
    body: BoletaInput;
    idempotencyKey: string | undefined;
    certIdHeader: string | undefined;
    requestId?: string;
  },
  now: Date,
  opts: { backlog?: BacklogGate } = {},
): Promise<DteRow> {
  const key = idempotencyKeyOf(req.idempotencyKey);
  if (!principal.companyId) throw new ApiError('forbidden', 'Emission needs an API key of a company.');
  const hash = bodyHash(req.body);
  const scope = { ...principal, companyId: principal.companyId };
  return issueOrReplay(
    db,
    scope,
    key,
    hash,
    async () => {
      checkSiiEnv(principal, req.body);
      const issuer = await loadIssuer(db, principal, req.certIdHeader || req.body.certificate_id, now);
      checkBoletaFor(issuer, req.body, now);
      // backpressure: above the company's unsent backlog, 503 sii_unavailable before any folio
      await opts.backlog?.admit(db, { companyId: scope.companyId, environment: principal.environment });
      // the folio, the boleta, its feed row and outbox rows in one statement (folio-write.ts)
      const draft = buildBoletaDocument(req.body, { emisor: issuer.company.emisor, folio: 0 });
      const doc = newBoleta(
        issuer,
        req.body,
        { idempotencyKey: key, bodyHash: hash, body: req.body, requestId: req.requestId },
        draft,
        randomUUID(),
        now,
      );
      const written = await writeWithFolio(db, doc, draft);
      if (written) return written;
      return emissionRefused(
        db,
        {
          organizationId: principal.organizationId,
          companyId: issuer.company.id,
          environment: principal.environment,
          tipoDte: req.body.tipo_dte,
        },
        now,
      );
    },
    (known) => known,
  );
}
