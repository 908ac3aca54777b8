import { chargeDocuments } from '@dte/billing';
import { randomUUID } from 'node:crypto';
import {
  bheAnnulmentWindow,
  bheFechaProblem,
  computeBheRetencion,
  normalizeRut,
  santiagoDate,
} from '@dte/engine';
import {
  anularBhe,
  consultarBhe,
  emitirBhe,
  isSiiError,
  type SiiClient,
  type SiiError,
} from '@dte/sii-client';
import { returnedRows, isUuid } from '@dte/database';
import type { DataSource, EntityManager } from 'typeorm';
import type { KeyWrapper } from '@dte/secrets';
import {
  loadSigningCredential,
  resolveActiveCertificate,
  resolveSigningCertificate,
} from '@dte/certificates';
import type { Principal } from '@dte/tenancy';
import {
  bodyHash,
  loadCompanyProfile,
  idempotencyKeyOf,
  replayOrConflict,
  rowByIdempotencyKey,
  type IdempotencyScope,
} from '@dte/emission';
import { ApiError } from '@dte/error-catalog';

export interface BheBody {
  rut_emisor?: string;
  rut_receptor: string;
  razon_social_receptor?: string;
  fecha_emision: string;
  descripcion: string;
  monto_bruto: number;
  retencion?: number;
  retencion_por?: 'receptor' | 'emisor';
  sii_env?: 'cert' | 'prod';
}

interface BheRow {
  id: string;
  sii_env: string;
  rut_emisor: string;
  rut_receptor: string;
  razon_social_receptor: string | null;
  fecha_emision: string;
  periodo: string;
  descripcion: string;
  monto_bruto: string;
  tasa_retencion: string;
  monto_retencion: string;
  monto_liquido: string;
  retencion_por: string;
  estado: 'vigente' | 'anulacion_solicitada' | 'anulada';
  numero_sii: string | null;
  anulada_at: Date | null;
  anulacion_solicitada_at: Date | null;
  motivo_anulacion: string | null;
  certificate_id?: string;
  company_id: string;
  body_hash: string;
  created_at: Date;
}

const COLUMNS = `id, sii_env, rut_emisor, rut_receptor, razon_social_receptor,
  to_char(fecha_emision, 'YYYY-MM-DD') AS fecha_emision, periodo, descripcion, monto_bruto, tasa_retencion,
  monto_retencion, monto_liquido, retencion_por, estado, numero_sii, anulada_at, anulacion_solicitada_at,
  motivo_anulacion, company_id,
  body_hash, created_at`;

/**
 * The record shown. `estado`: vigente, anulacion_solicitada (asked after day 10 of the next month:
 * the receiver must confirm; the BHE is still valid and its retention must be declared, so
 * `anulada` is false and `retencion_vigente` true) or anulada. `plazo_anulacion`: the last day of
 * the immediate annulment and the outer limit (bheAnnulmentWindow).
 */
export function bheRecord(r: BheRow) {
  const w = bheAnnulmentWindow(r.fecha_emision, r.fecha_emision);
  return {
    id: r.id,
    numero: r.numero_sii === null ? null : Number(r.numero_sii),
    rut_emisor: r.rut_emisor,
    rut_receptor: r.rut_receptor,
    razon_social_receptor: r.razon_social_receptor,
    fecha_emision: r.fecha_emision,
    periodo: r.periodo,
    descripcion: r.descripcion,
    monto_bruto: Number(r.monto_bruto),
    tasa_retencion: Number(r.tasa_retencion),
    monto_retencion: Number(r.monto_retencion),
    monto_liquido: Number(r.monto_liquido),
    retencion_por: r.retencion_por,
    estado: r.estado,
    anulada: r.estado === 'anulada',
    anulacion_pendiente: r.estado === 'anulacion_solicitada',
    retencion_vigente: r.estado !== 'anulada',
    anulacion_solicitada_at: r.anulacion_solicitada_at
      ? new Date(r.anulacion_solicitada_at).toISOString()
      : null,
    plazo_anulacion: { inmediata_hasta: w.inmediataHasta, limite: w.limite },
    anulada_at: r.anulada_at ? new Date(r.anulada_at).toISOString() : null,
    motivo_anulacion: r.motivo_anulacion,
    sii_env: r.sii_env,
    created_at: new Date(r.created_at).toISOString(),
    links: { self: `/api/v1/bhe/${r.id}`, anular: `/api/v1/bhe/${r.id}/anular` },
  };
}

export interface BheDeps {
  db: DataSource;
  keys: KeyWrapper;
  sii: SiiClient;
}

/** The SII's answers as the catalog's bhe.* codes. */
function siiFailure(err: SiiError, expected?: number): ApiError {
  if (err.kind === 'transient' || err.kind === 'protocol')
    return new ApiError('bhe.rest.unavailable', `The SII did not answer the BHE request: ${err.message}`);
  if (err.kind === 'auth' || err.httpStatus === 403)
    return new ApiError(
      'bhe.credential.invalid',
      `The SII refused the certificate for BHE: ${err.glosa ?? err.message}`,
    );
  if (err.siiCode === 'RETENCION')
    return new ApiError('bhe.retencion.mismatch', err.glosa ?? err.message, { detail: { expected } });
  if (err.siiCode === 'RECEPTOR') return new ApiError('bhe.receptor.tipo_invalid', err.glosa ?? err.message);
  if (err.siiCode === 'PLAZO') return new ApiError('bhe.plazo_anulacion.expired', err.glosa ?? err.message);
  if (err.siiCode === 'FECHA')
    return new ApiError('validation_failed', err.glosa ?? err.message, {
      issues: [{ path: 'fecha_emision', message: err.glosa ?? err.message }],
    });
  return new ApiError(
    'bhe.rest.pipeline_error',
    `The SII refused the BHE request: ${err.glosa ?? err.message}`,
  );
}

/** The BHE an Idempotency-Key issued for the key's company and environment (issue 28). */
const byKey = (db: DataSource | EntityManager, scope: IdempotencyScope, key: string) =>
  rowByIdempotencyKey<BheRow>(db, 'bhes', COLUMNS, scope, key);
const replay = (r: BheRow, hash: string) => replayOrConflict(r, hash, 'a BHE');

/**
 * POST /bhe: Idempotency-Key; the receiver must be another taxpayer (bhe.receptor.tipo_invalid);
 * the retention of the year of issue computed here (a declared one that differs is
 * bhe.retencion.mismatch with detail.expected); then, in one transaction serialized per key, the
 * SII issues it (its number) and the row is written. A refusal or failure of the SII writes nothing.
 */
export async function issueBhe(
  d: BheDeps,
  principal: Principal,
  req: { body: BheBody; idempotencyKey: string | undefined; certIdHeader: string | undefined },
  now: Date,
) {
  const key = idempotencyKeyOf(req.idempotencyKey);
  if (!principal.companyId) throw new ApiError('forbidden', 'Issuing needs an API key of a company.');
  const scope: IdempotencyScope = { ...principal, companyId: principal.companyId };
  const hash = bodyHash(req.body);
  const known = await byKey(d.db, scope, key);
  if (known) return bheRecord(replay(known, hash));
  const b = req.body;
  if (b.sii_env && b.sii_env !== principal.environment)
    throw new ApiError(
      'dte.sii_env_credential_mismatch',
      `The body asks for sii_env ${b.sii_env} but the API key is for ${principal.environment}.`,
      {
        detail: { solicitado: b.sii_env, credencial: principal.environment },
      },
    );
  const company = await loadCompanyProfile(d.db, principal.organizationId, principal.companyId);
  const rutEmisor = normalizeRut(company.rut);
  if (b.rut_emisor && normalizeRut(b.rut_emisor) !== rutEmisor)
    throw new ApiError(
      'emisor_rut_mismatch',
      `rut_emisor ${b.rut_emisor} is not the company of this API key.`,
      {
        detail: { rut_emisor: b.rut_emisor, expected: company.rut },
      },
    );
  // not ahead of today, and in today's year: never into another year's retention rate
  const fechaProblem = bheFechaProblem(b.fecha_emision, santiagoDate(now));
  if (fechaProblem)
    throw new ApiError('validation_failed', `fecha_emision ${b.fecha_emision} ${fechaProblem}`, {
      issues: [{ path: 'fecha_emision', message: fechaProblem }],
    });
  const rutReceptor = normalizeRut(b.rut_receptor);
  if (rutReceptor === rutEmisor)
    throw new ApiError(
      'bhe.receptor.tipo_invalid',
      'The receiver of a BHE must be another taxpayer than its issuer.',
    );
  const amounts = computeBheRetencion(b.monto_bruto, b.fecha_emision);
  if (b.retencion !== undefined && b.retencion !== amounts.retencion)
    throw new ApiError(
      'bhe.retencion.mismatch',
      `The retention of ${b.fecha_emision.slice(0, 4)} (${amounts.tasa} %) on ${b.monto_bruto} is ${amounts.retencion}, not ${b.retencion}.`,
      { detail: { expected: amounts.retencion, tasa: amounts.tasa, declared: b.retencion } },
    );
  // a certificate of the company's signers only (a company-scoped key never signs with another's)
  const cert = await resolveSigningCertificate(d.db, principal.organizationId, req.certIdHeader, {
    path: 'other',
    now,
    companyId: principal.companyId,
  });
  const credential = await loadSigningCredential(d.db, d.keys, cert.id);
  const retencionPor = b.retencion_por ?? 'receptor';
  const row = await d.db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `bhe-idem:${principal.companyId}:${principal.environment}:${key}`,
    ]);
    const raced = await byKey(m, scope, key);
    if (raced) return replay(raced, hash);
    // the month's allowance before the SII is asked: 402 and nothing issued when it is used up
    await chargeDocuments(
      m,
      { organizationId: principal.organizationId, environment: principal.environment, now },
      1,
    );
    let numero: number;
    try {
      numero = (
        await emitirBhe(d.sii, principal.environment, credential, {
          rutEmisor,
          rutReceptor,
          fechaEmision: b.fecha_emision,
          descripcion: b.descripcion,
          montoBruto: amounts.montoBruto,
          retencion: amounts.retencion,
          retencionPor,
        })
      ).numero;
    } catch (err) {
      throw isSiiError(err) ? siiFailure(err, amounts.retencion) : err;
    }
    const rows: BheRow[] = await m.query(
      `INSERT INTO bhes (id, organization_id, company_id, sii_env, idempotency_key, body_hash, rut_emisor, rut_receptor,
         razon_social_receptor, fecha_emision, periodo, descripcion, monto_bruto, tasa_retencion, monto_retencion,
         monto_liquido, retencion_por, estado, numero_sii, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 'vigente', $18, $19)
       RETURNING ${COLUMNS}`,
      [
        randomUUID(),
        principal.organizationId,
        company.id,
        principal.environment,
        key,
        hash,
        rutEmisor,
        rutReceptor,
        b.razon_social_receptor ?? null,
        b.fecha_emision,
        b.fecha_emision.slice(0, 7),
        b.descripcion,
        amounts.montoBruto,
        amounts.tasa,
        amounts.retencion,
        amounts.liquido,
        retencionPor,
        numero,
        now,
      ],
    );
    return rows[0]!;
  });
  return bheRecord(row);
}

type Scope = { organizationId: string; environment: string; companyId: string | null };

async function findBhe(
  db: DataSource | EntityManager,
  scope: Scope,
  id: string,
  lock = false,
): Promise<BheRow> {
  if (!isUuid(id)) throw new ApiError('bhe.not_found', 'No such BHE.');
  const rows: BheRow[] = await db.query(
    `SELECT ${COLUMNS} FROM bhes WHERE id = $1 AND organization_id = $2 AND sii_env = $3
        AND ($4::uuid IS NULL OR company_id = $4)${lock ? ' FOR UPDATE' : ''}`,
    [id, scope.organizationId, scope.environment, scope.companyId],
  );
  if (!rows[0]) throw new ApiError('bhe.not_found', 'No such BHE.');
  return rows[0];
}

/**
 * GET /bhe/:id. A BHE whose annulment waits for the receiver is asked at the SII again (with the
 * company's active certificate): confirmed, it is anulada; refused or lapsed, vigente. When the
 * SII cannot be asked now, the stored record is answered as it is (the next read asks again).
 */
export async function getBhe(d: BheDeps, scope: Scope, id: string, now: Date) {
  const row = await findBhe(d.db, scope, id);
  if (row.estado !== 'anulacion_solicitada' || row.numero_sii === null) return bheRecord(row);
  let estado: string;
  try {
    const cert = await resolveActiveCertificate(d.db, scope.organizationId, undefined, now, row.company_id);
    const credential = await loadSigningCredential(d.db, d.keys, cert.id);
    estado = (
      await consultarBhe(d.sii, scope.environment as 'cert' | 'prod', credential, {
        rutEmisor: row.rut_emisor,
        numero: Number(row.numero_sii),
      })
    ).estado;
  } catch (err) {
    if (isSiiError(err) || err instanceof ApiError) return bheRecord(row);
    throw err;
  }
  if (estado !== 'ANULADA' && estado !== 'VIGENTE') return bheRecord(row);
  const updated: unknown[] = await d.db.query(
    `UPDATE bhes SET estado = $2, anulada_at = CASE WHEN $2 = 'anulada' THEN $3::timestamptz ELSE NULL END
      WHERE id = $1 AND estado = 'anulacion_solicitada' RETURNING ${COLUMNS}`,
    [row.id, estado === 'ANULADA' ? 'anulada' : 'vigente', now],
  );
  return bheRecord(returnedRows<BheRow>(updated)[0] ?? (await findBhe(d.db, scope, id)));
}

/** The states of a BHE (bheRecord). */
export const BHE_ESTADOS = ['vigente', 'anulacion_solicitada', 'anulada'];

/**
 * GET /bhe: filters periodo (YYYY-MM), estado (vigente|anulacion_solicitada|anulada), anulada
 * (true|false: a pending request is not annulled); limit 1-100.
 */
export async function listBhe(db: DataSource, scope: Scope, q: Record<string, unknown>) {
  const n = Number.parseInt(String(q.limit ?? ''), 10);
  const limit = Number.isFinite(n) ? Math.min(100, Math.max(1, n)) : 20;
  const periodo = typeof q.periodo === 'string' ? q.periodo : undefined;
  if (periodo !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(periodo))
    throw new ApiError('validation_failed', 'periodo must be YYYY-MM', {
      issues: [{ path: 'periodo', message: 'YYYY-MM' }],
    });
  const estado = typeof q.estado === 'string' ? q.estado : undefined;
  if (estado !== undefined && !BHE_ESTADOS.includes(estado))
    throw new ApiError('validation_failed', `estado must be ${BHE_ESTADOS.join(', ')}`, {
      issues: [{ path: 'estado', message: BHE_ESTADOS.join(' | ') }],
    });
  let estados = estado === undefined ? null : [estado];
  if (q.anulada !== undefined) {
    if (q.anulada !== 'true' && q.anulada !== 'false')
      throw new ApiError('validation_failed', 'anulada must be true or false', {
        issues: [{ path: 'anulada', message: 'true | false' }],
      });
    // a BHE whose annulment waits for the receiver is not annulled (still valid)
    const wanted = q.anulada === 'true' ? ['anulada'] : ['vigente', 'anulacion_solicitada'];
    estados = (estados ?? wanted).filter((e) => wanted.includes(e));
    if (estados.length === 0) return { bhes: [], next_cursor: null };
  }
  const rows: BheRow[] = await db.query(
    `SELECT ${COLUMNS} FROM bhes WHERE organization_id = $1 AND sii_env = $2 AND ($3::uuid IS NULL OR company_id = $3)
        AND ($4::text IS NULL OR periodo = $4) AND ($5::text[] IS NULL OR estado = ANY($5))
      ORDER BY created_at DESC, id DESC LIMIT $6`,
    [scope.organizationId, scope.environment, scope.companyId, periodo ?? null, estados, limit],
  );
  return { bhes: rows.map(bheRecord), next_cursor: null };
}

/**
 * POST /bhe/:id/anular, as the SII annuls (bheAnnulmentWindow): until day 10 of the month after
 * the issue it is annulled at once; from day 11 until 1 March of the next year the SII takes a
 * request the receiver must confirm, and the BHE stays valid (estado anulacion_solicitada, its
 * retention still declared) until GET /bhe/:id reads the receiver's answer; after that limit,
 * bhe.plazo_anulacion.expired. Annulling an annulled or pending BHE answers it as it is.
 */
export async function annulBhe(
  d: BheDeps,
  principal: Principal,
  id: string,
  motivo: string | undefined,
  certIdHeader: string | undefined,
  now: Date,
) {
  const scope = {
    organizationId: principal.organizationId,
    environment: principal.environment,
    companyId: principal.companyId,
  };
  const current = await findBhe(d.db, scope, id);
  if (current.estado !== 'vigente') return bheRecord(current);
  const w = bheAnnulmentWindow(current.fecha_emision, santiagoDate(now));
  if (w.modo === 'vencida')
    throw new ApiError(
      'bhe.plazo_anulacion.expired',
      `A BHE issued on ${current.fecha_emision} could be annulled until ${w.limite}.`,
      { detail: { fecha_emision: current.fecha_emision, limite: w.limite } },
    );
  const cert = await resolveSigningCertificate(d.db, principal.organizationId, certIdHeader, {
    path: 'other',
    now,
    companyId: principal.companyId,
  });
  const credential = await loadSigningCredential(d.db, d.keys, cert.id);
  const row = await d.db.transaction(async (m) => {
    const locked = await findBhe(m, scope, id, true);
    if (locked.estado !== 'vigente') return locked;
    let estado: 'anulada' | 'anulacion_solicitada';
    try {
      const r = await anularBhe(d.sii, principal.environment, credential, {
        rutEmisor: locked.rut_emisor,
        numero: Number(locked.numero_sii),
        motivo: motivo ?? 'anulada por el emisor',
      });
      estado = r.estado === 'ANULADA' ? 'anulada' : 'anulacion_solicitada';
    } catch (err) {
      if (!isSiiError(err)) throw err;
      // the SII already has it annulled, or already has the request: record that
      if (err.httpStatus === 409 && err.siiCode === 'SOLICITADA') estado = 'anulacion_solicitada';
      else if (err.httpStatus === 409) estado = 'anulada';
      else throw siiFailure(err);
    }
    const updated: unknown[] = await m.query(
      `UPDATE bhes SET estado = $2, motivo_anulacion = $3,
              anulada_at = CASE WHEN $2 = 'anulada' THEN $4::timestamptz END,
              anulacion_solicitada_at = CASE WHEN $2 = 'anulacion_solicitada' THEN $4::timestamptz END
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, estado, motivo ?? null, now],
    );
    return returnedRows<BheRow>(updated)[0]!;
  });
  return bheRecord(row);
}
