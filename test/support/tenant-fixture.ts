/**
 * Database-level tenants for the packages' tests: rows inserted directly in a migrated schema
 * (test/support/env.ts migratedDatabase), no HTTP api.
 *
 *   newRut()                        a fresh valid RUT (random body, correct check digit)
 *   insertTenant(db, opts)          an organization and its company (production gate, certified
 *                                   types, signer RUTs, branches as asked)
 *   insertCafRow(db, t, tipo, d, h) a CAF row of folios d..h (placeholder XML and key: for the
 *                                   folio counters, not for signing)
 *   insertCertificateRow(db, t)     a certificate row (placeholder sealed blobs: for foreign keys
 *                                   and the signer choice, not for signing)
 *   insertQueuedDocument(db, t, o)  a document as the emission writes it: the dtes row in `queued`,
 *                                   its feed row and its outbox record (same event id)
 *   apiKeyPrincipal(t, scopes)      what authenticating an API key of the tenant's company gives
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { statusChangeEntry, writeOutbox } from '@dte/database';
import { rutCheckDigit } from '@dte/engine';
import type { Principal, Scope } from '@dte/tenancy';

let rutCounter = 0;
/** A fresh valid RUT (random body, correct check digit). */
export function newRut(): string {
  rutCounter += 1;
  const body = String(
    10_000_000 + ((Number.parseInt(randomBytes(3).toString('hex'), 16) + rutCounter * 7919) % 80_000_000),
  );
  return `${body}-${rutCheckDigit(body)}`;
}

export interface Tenant {
  organizationId: string;
  companyId: string;
  rut: string;
  environment: 'cert' | 'prod';
}

export async function insertTenant(
  db: DataSource,
  opts: {
    environment?: 'cert' | 'prod';
    prodEnabled?: boolean;
    prodTipos?: number[];
    signerRuts?: string[];
    branches?: { nombre: string; direccion: string; comuna: string; codigoSii?: number; closed?: boolean }[];
  } = {},
): Promise<Tenant & { branchIds: string[] }> {
  const rut = newRut();
  const [org] = await db.query(
    'INSERT INTO organizations (name, rut, prod_enabled) VALUES ($1, $2, $3) RETURNING id',
    [`org-${randomBytes(4).toString('hex')}`, rut, opts.prodEnabled ?? false],
  );
  const [company] = await db.query(
    `INSERT INTO companies (organization_id, rut, razon_social, giro, direccion, comuna, signer_ruts, prod_tipos)
     VALUES ($1, $2, 'EMPRESA DE PRUEBA SPA', 'Servicios', 'Av. Uno 1', 'Santiago', $3, $4) RETURNING id`,
    [org.id, rut, opts.signerRuts ?? [], opts.prodTipos ?? []],
  );
  const branchIds: string[] = [];
  for (const b of opts.branches ?? []) {
    const [row] = await db.query(
      `INSERT INTO branches (company_id, nombre, direccion, comuna, codigo_sii, closed_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [company.id, b.nombre, b.direccion, b.comuna, b.codigoSii ?? null, b.closed ? new Date() : null],
    );
    branchIds.push(row.id);
  }
  return {
    organizationId: org.id,
    companyId: company.id,
    rut,
    environment: opts.environment ?? 'cert',
    branchIds,
  };
}

/** The Principal an API key of the tenant's company, in its environment, with these scopes gives. */
export function apiKeyPrincipal(t: Tenant, scopes: Scope[]): Principal {
  return {
    kind: 'api_key',
    organizationId: t.organizationId,
    companyId: t.companyId,
    environment: t.environment,
    scopes: new Set(scopes),
    role: null,
    actorId: randomUUID(),
  };
}

/** A CAF row of folios desde..hasta for the tenant's company (not signable: counters only). */
export async function insertCafRow(
  db: DataSource,
  t: Tenant,
  tipoDte: number,
  desde: number,
  hasta: number,
  opts: { expiresAt?: Date | null; deleted?: boolean; environment?: 'cert' | 'prod' } = {},
): Promise<string> {
  const [row] = await db.query(
    `INSERT INTO cafs (organization_id, company_id, environment, tipo_dte, rut_emisor, desde, hasta, next_folio,
       fecha_autorizacion, expires_at, idk, caf_xml, rsa_public_key_pem, rsa_private_key_sealed, source, deleted_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $6, current_date, $8, 100, '<CAF/>', 'pem', '{}'::jsonb, 'upload', $9)
     RETURNING id`,
    [
      t.organizationId,
      t.companyId,
      opts.environment ?? t.environment,
      tipoDte,
      t.rut,
      desde,
      hasta,
      opts.expiresAt ?? null,
      opts.deleted ? new Date() : null,
    ],
  );
  return row.id;
}

/** A certificate row of the organization (placeholder sealed blobs: not for signing). */
export async function insertCertificateRow(
  db: DataSource,
  t: Pick<Tenant, 'organizationId' | 'rut'>,
  opts: { label?: string; rut?: string; notBefore?: Date; notAfter?: Date; isDefault?: boolean } = {},
): Promise<string> {
  const now = Date.now();
  const [row] = await db.query(
    `INSERT INTO certificates (organization_id, label, rut, subject, serial_number, fingerprint_sha256,
       not_before, not_after, p12_sealed, password_sealed, is_default)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '{}'::jsonb, '{}'::jsonb, $9) RETURNING id`,
    [
      t.organizationId,
      opts.label ?? 'main',
      opts.rut ?? t.rut,
      `CN=Firmante ${opts.rut ?? t.rut}`,
      randomBytes(8).toString('hex'),
      randomBytes(32).toString('hex'),
      opts.notBefore ?? new Date(now - 86_400_000),
      opts.notAfter ?? new Date(now + 365 * 86_400_000),
      opts.isDefault ?? true,
    ],
  );
  return row.id;
}

export interface QueuedDocument {
  id: string;
  folio: number;
  tipoDte: number;
  /** the event id of its `queued` record (feed row and outbox payload) */
  queuedEventId: string;
}

/**
 * A document as the emission's statement leaves it: the dtes row in `queued`, its feed row and the
 * outbox record of that status (topic dte-status, same event id, source api).
 */
export async function insertQueuedDocument(
  db: DataSource,
  t: Tenant,
  doc: {
    tipoDte: number;
    folio: number;
    cafId: string;
    certificateId: string;
    at?: Date;
    /** the stored emission body (its `references` are what the note rules read); {} by default */
    input?: Record<string, unknown>;
    /** YYYY-MM-DD; today by default */
    fechaEmision?: string;
    montoTotal?: number;
  },
): Promise<QueuedDocument> {
  const id = randomUUID();
  const at = doc.at ?? new Date();
  // the queued record as the emission announces it (@dte/database statusChangeEntry, source api)
  const queued = statusChangeEntry(
    { id, organizationId: t.organizationId, siiEnv: t.environment, tipoDte: doc.tipoDte, folio: doc.folio },
    { siiStatus: 'queued', observedAt: at, source: 'api' },
  );
  const eventId = queued.payload.event_id;
  await db.transaction(async (m) => {
    await m.query(
      `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
         rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, iva, monto_total, input,
         document, sii_status, observed_at, idempotency_key, body_hash, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '76086428-5', 'CLIENTE SPA', coalesce($12::date, current_date),
         round($13::bigint / 1.19), $13::bigint - round($13::bigint / 1.19), $13::bigint, $14::jsonb, '{}'::jsonb, 'queued', $10, $11, 'h', $10)`,
      [
        id,
        t.organizationId,
        t.companyId,
        t.environment,
        doc.tipoDte,
        doc.folio,
        doc.cafId,
        doc.certificateId,
        t.rut,
        at,
        `idem-${id}`,
        doc.fechaEmision ?? null,
        doc.montoTotal ?? 1190,
        JSON.stringify(doc.input ?? {}),
      ],
    );
    await m.query(
      `INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
       VALUES ($1, $2, 'queued', NULL, NULL, 'api', $3)`,
      [id, eventId, at],
    );
    await writeOutbox(m, [queued]);
  });
  return { id, folio: doc.folio, tipoDte: doc.tipoDte, queuedEventId: eventId };
}
