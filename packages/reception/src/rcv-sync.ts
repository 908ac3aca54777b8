/**
 * Synchronizing one (company, environment, period) of the RCV from the SII, and keeping the
 * sales side of our own documents from the dte-status topic. Used by services/rcv-sync.
 *
 * One writer per (company, env, period): a PostgreSQL session advisory lock on
 * `rcv:<company>:<env>:<period>` is held from the SII read to the commit; a second writer finds
 * it taken and answers `busy` (the sync command is also keyed by the same triple, so one
 * consumer sees a period's commands in order). The snapshot is replaced in ONE transaction after
 * both sides were read: an SII failure leaves the previous snapshot as it was, and the period is
 * marked `retrying` with the next attempt after an exponential backoff (`failed` after
 * `maxAttempts`). A sync is idempotent: the same SII answer writes the same rows.
 */
import type { RcvDocumento, RcvOperacion, RcvRegistro } from '@dte/sii-client';
import { receptorEstado, siiEstado } from './estados';
import { normRut } from './intercambio';

/** What the sync reads: one side of the register of a company (the service wires a SiiSession). */
export interface RcvSource {
  read(q: {
    companyId: string;
    organizationId: string;
    rut: string;
    env: 'cert' | 'prod';
    operacion: RcvOperacion;
    periodo: string;
  }): Promise<RcvRegistro>;
}

/** A typeorm DataSource (only what is used here). */
export interface SyncDb {
  createQueryRunner(): {
    connect(): Promise<unknown>;
    query(sql: string, params?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    startTransaction(): Promise<void>;
    commitTransaction(): Promise<void>;
    rollbackTransaction(): Promise<void>;
    release(): Promise<void>;
  };
  query(sql: string, params?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface SyncRequest {
  companyId: string;
  env: 'cert' | 'prod';
  periodo: string;
  now?: Date;
  /** attempts before a period is left `failed` (a new POST /rcv re-arms it) */
  maxAttempts?: number;
  /** first backoff (ms); doubles per attempt, capped at one hour */
  backoffMs?: number;
}

export type SyncResult =
  | {
      outcome: 'synced';
      ventas: number;
      compras: number;
      /** documents the SII showed */
      documents: number;
      /** register rows written because they were new, changed or gone from the SII (incremental) */
      changed: number;
    }
  | { outcome: 'busy' }
  | { outcome: 'failed'; error: string; attempts: number; nextAttemptAt: Date | null }
  | { outcome: 'unknown_company' };

/** Documents of these types are in the RCV one by one (guías 52 and boletas are not). */
export const RCV_TIPOS = [29, 30, 32, 33, 34, 40, 43, 45, 46, 55, 56, 60, 61, 110, 111, 112];

export const PERIODO_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

export async function syncPeriod(db: SyncDb, source: RcvSource, req: SyncRequest): Promise<SyncResult> {
  const now = req.now ?? new Date();
  const qr = db.createQueryRunner();
  await qr.connect();
  const lock = `rcv:${req.companyId}:${req.env}:${req.periodo}`;
  try {
    const [got] = await qr.query(`SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok`, [lock]);
    if (!got?.ok) return { outcome: 'busy' };
    try {
      const [company] = await qr.query(`SELECT id, organization_id, rut FROM companies WHERE id = $1`, [
        req.companyId,
      ]);
      if (!company) return { outcome: 'unknown_company' };
      const who = {
        companyId: company.id as string,
        organizationId: company.organization_id as string,
        rut: normRut(company.rut as string),
        env: req.env,
        periodo: req.periodo,
      };
      let ventas: RcvRegistro;
      let compras: RcvRegistro;
      try {
        ventas = await source.read({ ...who, operacion: 'ventas' });
        compras = await source.read({ ...who, operacion: 'compras' });
      } catch (err) {
        return await markFailure(qr, who, req, now, (err as Error).message);
      }
      await qr.startTransaction();
      try {
        const w = await writeSnapshot(qr, who, ventas.documentos, compras.documentos, now);
        await qr.commitTransaction();
        return {
          outcome: 'synced',
          ventas: ventas.documentos.length,
          compras: compras.documentos.length,
          documents: w.n,
          changed: w.changed,
        };
      } catch (err) {
        await qr.rollbackTransaction();
        throw err;
      }
    } finally {
      await qr.query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [lock]);
    }
  } finally {
    await qr.release();
  }
}

type Who = { companyId: string; organizationId: string; rut: string; env: 'cert' | 'prod'; periodo: string };
type Runner = ReturnType<SyncDb['createQueryRunner']>;

async function markFailure(
  qr: Runner,
  who: Who,
  req: SyncRequest,
  now: Date,
  error: string,
): Promise<SyncResult> {
  const max = req.maxAttempts ?? 8;
  const base = req.backoffMs ?? 5_000;
  const [row] = await qr.query(
    `INSERT INTO rcv_periods (company_id, sii_env, periodo, organization_id, status, attempts, last_error, requested_at)
     VALUES ($1, $2, $3, $4, 'retrying', 1, $5, $6)
     ON CONFLICT (company_id, sii_env, periodo) DO UPDATE
       SET attempts = rcv_periods.attempts + 1, last_error = EXCLUDED.last_error
     RETURNING attempts`,
    [who.companyId, who.env, who.periodo, who.organizationId, error.slice(0, 500), now],
  );
  const attempts = Number(row.attempts);
  const next =
    attempts >= max ? null : new Date(now.getTime() + Math.min(3_600_000, base * 2 ** (attempts - 1)));
  await qr.query(
    `UPDATE rcv_periods SET status = $4, next_attempt_at = $5 WHERE company_id = $1 AND sii_env = $2 AND periodo = $3`,
    [who.companyId, who.env, who.periodo, next ? 'retrying' : 'failed', next],
  );
  return { outcome: 'failed', error, attempts, nextAttemptAt: next };
}

async function writeSnapshot(
  qr: Runner,
  who: Who,
  ventas: RcvDocumento[],
  compras: RcvDocumento[],
  now: Date,
): Promise<{ n: number; changed: number }> {
  const key = [who.companyId, who.env, who.periodo];
  let n = 0;
  let changed = 0;
  for (const [operacion, docs] of [
    ['ventas', ventas],
    ['compras', compras],
  ] as const) {
    const rows = uniqueBy(docs, (d) => `${normRut(d.rutEmisor)}|${d.tipoDte}|${d.folio}`).map((d) => ({
      rut_emisor: normRut(d.rutEmisor),
      tipo_dte: d.tipoDte,
      folio: d.folio,
      rut_receptor: d.rutReceptor ? normRut(d.rutReceptor) : null,
      fch_emis: d.fchEmis,
      fecha_recepcion: parseInstant(d.fechaRecepcion)?.toISOString() ?? null,
      mnt_neto: d.mntNeto,
      mnt_exe: d.mntExe,
      iva: d.iva,
      mnt_total: d.mntTotal,
      sii_estado: siiEstado(d.estado, d.eventos),
      sii_estado_raw: d.estado,
      eventos: d.eventos,
      razon_social: d.razonSocial ?? null,
      iva_no_recuperable: d.ivaNoRecuperable ?? 0,
      cod_iva_no_recuperable: d.codIvaNoRecuperable ?? null,
      iva_uso_comun: d.ivaUsoComun ?? 0,
      mnt_activo_fijo: d.mntActivoFijo ?? 0,
      iva_activo_fijo: d.ivaActivoFijo ?? 0,
      mnt_sin_credito: d.mntSinCredito ?? 0,
      otros_impuestos: d.otrosImpuestos?.total ?? 0,
      cod_otro_impuesto: d.otrosImpuestos?.codigo ?? null,
      tasa_otro_impuesto: d.otrosImpuestos?.tasa ?? null,
      tipo_compra: d.tipoCompra ?? null,
      fecha_acuse: d.fechaAcuse ?? null,
      fecha_reclamo: d.fechaReclamo ?? null,
    }));
    // one statement per chunk: the rows travel as one JSON array (jsonb_to_recordset)
    for (const chunk of chunks(rows, CHUNK)) {
      const written: unknown[] = await qr.query(
        `INSERT INTO rcv_documents (company_id, sii_env, operacion, periodo, rut_emisor, tipo_dte, folio, rut_receptor,
            fch_emis, fecha_recepcion, mnt_neto, mnt_exe, iva, mnt_total, in_sii, sii_estado, sii_estado_raw, eventos,
            razon_social, iva_no_recuperable, cod_iva_no_recuperable, iva_uso_comun, mnt_activo_fijo, iva_activo_fijo,
            mnt_sin_credito, otros_impuestos, cod_otro_impuesto, tasa_otro_impuesto, tipo_compra, fecha_acuse, fecha_reclamo)
         SELECT $1, $2, $3, $4, x.rut_emisor, x.tipo_dte, x.folio, x.rut_receptor, x.fch_emis, x.fecha_recepcion,
                x.mnt_neto, x.mnt_exe, x.iva, x.mnt_total, true, x.sii_estado, x.sii_estado_raw, x.eventos,
                x.razon_social, x.iva_no_recuperable, x.cod_iva_no_recuperable, x.iva_uso_comun, x.mnt_activo_fijo,
                x.iva_activo_fijo, x.mnt_sin_credito, x.otros_impuestos, x.cod_otro_impuesto, x.tasa_otro_impuesto,
                x.tipo_compra, x.fecha_acuse, x.fecha_reclamo
           FROM jsonb_to_recordset($5::jsonb) AS x(rut_emisor text, tipo_dte integer, folio bigint, rut_receptor text,
                fch_emis date, fecha_recepcion timestamptz, mnt_neto bigint, mnt_exe bigint, iva bigint, mnt_total bigint,
                sii_estado text, sii_estado_raw text, eventos text[], razon_social text, iva_no_recuperable bigint,
                cod_iva_no_recuperable integer, iva_uso_comun bigint, mnt_activo_fijo bigint, iva_activo_fijo bigint,
                mnt_sin_credito bigint, otros_impuestos bigint, cod_otro_impuesto integer, tasa_otro_impuesto numeric,
                tipo_compra integer, fecha_acuse timestamptz, fecha_reclamo timestamptz)
         ON CONFLICT (company_id, sii_env, operacion, rut_emisor, tipo_dte, folio) DO UPDATE SET
           periodo = EXCLUDED.periodo, rut_receptor = EXCLUDED.rut_receptor, fch_emis = EXCLUDED.fch_emis,
           fecha_recepcion = EXCLUDED.fecha_recepcion, mnt_neto = EXCLUDED.mnt_neto, mnt_exe = EXCLUDED.mnt_exe,
           iva = EXCLUDED.iva, mnt_total = EXCLUDED.mnt_total, in_sii = true, sii_estado = EXCLUDED.sii_estado,
           sii_estado_raw = EXCLUDED.sii_estado_raw, eventos = EXCLUDED.eventos, razon_social = EXCLUDED.razon_social,
           iva_no_recuperable = EXCLUDED.iva_no_recuperable, cod_iva_no_recuperable = EXCLUDED.cod_iva_no_recuperable,
           iva_uso_comun = EXCLUDED.iva_uso_comun, mnt_activo_fijo = EXCLUDED.mnt_activo_fijo,
           iva_activo_fijo = EXCLUDED.iva_activo_fijo, mnt_sin_credito = EXCLUDED.mnt_sin_credito,
           otros_impuestos = EXCLUDED.otros_impuestos, cod_otro_impuesto = EXCLUDED.cod_otro_impuesto,
           tasa_otro_impuesto = EXCLUDED.tasa_otro_impuesto, tipo_compra = EXCLUDED.tipo_compra,
           fecha_acuse = EXCLUDED.fecha_acuse, fecha_reclamo = EXCLUDED.fecha_reclamo, updated_at = now()
         WHERE (rcv_documents.periodo, rcv_documents.rut_receptor, rcv_documents.fch_emis, rcv_documents.fecha_recepcion,
                rcv_documents.mnt_neto, rcv_documents.mnt_exe, rcv_documents.iva, rcv_documents.mnt_total,
                rcv_documents.in_sii, rcv_documents.sii_estado, rcv_documents.sii_estado_raw, rcv_documents.eventos,
                rcv_documents.razon_social, rcv_documents.iva_no_recuperable, rcv_documents.cod_iva_no_recuperable,
                rcv_documents.iva_uso_comun, rcv_documents.mnt_activo_fijo, rcv_documents.iva_activo_fijo,
                rcv_documents.mnt_sin_credito, rcv_documents.otros_impuestos, rcv_documents.cod_otro_impuesto,
                rcv_documents.tasa_otro_impuesto, rcv_documents.tipo_compra, rcv_documents.fecha_acuse,
                rcv_documents.fecha_reclamo)
           IS DISTINCT FROM (EXCLUDED.periodo, EXCLUDED.rut_receptor, EXCLUDED.fch_emis, EXCLUDED.fecha_recepcion,
                EXCLUDED.mnt_neto, EXCLUDED.mnt_exe, EXCLUDED.iva, EXCLUDED.mnt_total,
                true, EXCLUDED.sii_estado, EXCLUDED.sii_estado_raw, EXCLUDED.eventos,
                EXCLUDED.razon_social, EXCLUDED.iva_no_recuperable, EXCLUDED.cod_iva_no_recuperable,
                EXCLUDED.iva_uso_comun, EXCLUDED.mnt_activo_fijo, EXCLUDED.iva_activo_fijo,
                EXCLUDED.mnt_sin_credito, EXCLUDED.otros_impuestos, EXCLUDED.cod_otro_impuesto,
                EXCLUDED.tasa_otro_impuesto, EXCLUDED.tipo_compra, EXCLUDED.fecha_acuse, EXCLUDED.fecha_reclamo)
         RETURNING 1`,
        [who.companyId, who.env, operacion, who.periodo, JSON.stringify(chunk)],
      );
      // incremental: only new or changed rows are written (and counted)
      changed += written.length;
      n += chunk.length;
    }
    // what the SII no longer shows is not in the SII (the row stays only when it is one of ours)
    // (counted through a CTE: typeorm answers a bare UPDATE with [rows, count])
    const [gone] = await qr.query(
      `WITH g AS (UPDATE rcv_documents r SET in_sii = false, sii_estado = NULL, sii_estado_raw = NULL, eventos = '{}', updated_at = now()
        WHERE r.company_id = $1 AND r.sii_env = $2 AND r.periodo = $3 AND r.operacion = $4 AND r.in_sii
          AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($5::jsonb) AS x(rut_emisor text, tipo_dte integer, folio bigint)
                           WHERE x.rut_emisor = r.rut_emisor AND x.tipo_dte = r.tipo_dte AND x.folio = r.folio)
        RETURNING 1) SELECT count(*)::int AS n FROM g`,
      [
        ...key,
        operacion,
        JSON.stringify(rows.map((x) => ({ rut_emisor: x.rut_emisor, tipo_dte: x.tipo_dte, folio: x.folio }))),
      ],
    );
    changed += Number(gone.n);
  }
  await qr.query(
    `DELETE FROM rcv_documents WHERE company_id = $1 AND sii_env = $2 AND periodo = $3 AND NOT in_sii AND dte_id IS NULL`,
    key,
  );
  // our own documents of the period, with the status our pipeline knows
  await qr.query(
    `INSERT INTO rcv_documents AS r (company_id, sii_env, operacion, periodo, rut_emisor, tipo_dte, folio, rut_receptor,
        fch_emis, mnt_neto, mnt_exe, iva, mnt_total, dte_id, own_sii_status, own_observed_at)
     SELECT d.company_id, d.sii_env, 'ventas', $3, upper(replace(d.rut_emisor, '.', '')), d.tipo_dte, d.folio,
            d.rut_receptor, d.fecha_emision, d.monto_neto, d.monto_exento, d.iva, d.monto_total, d.id, d.sii_status, d.observed_at
       FROM dtes d
      WHERE d.company_id = $1 AND d.sii_env = $2 AND to_char(d.fecha_emision, 'YYYY-MM') = $3 AND d.tipo_dte = ANY($4)
     ON CONFLICT (company_id, sii_env, operacion, rut_emisor, tipo_dte, folio) DO UPDATE SET
       dte_id = EXCLUDED.dte_id,
       own_sii_status = CASE WHEN r.own_observed_at IS NULL OR r.own_observed_at <= EXCLUDED.own_observed_at
                             THEN EXCLUDED.own_sii_status ELSE r.own_sii_status END,
       own_observed_at = GREATEST(r.own_observed_at, EXCLUDED.own_observed_at)`,
    [...key, RCV_TIPOS],
  );
  // receptor_estado of our documents: what the counterpart did, as the SII registered it
  const ours: {
    dte_id: string;
    in_sii: boolean;
    eventos: string[];
    fecha_recepcion: Date | null;
    receptor_estado: string;
  }[] = await qr.query(
    `SELECT r.dte_id, r.in_sii, r.eventos, r.fecha_recepcion, d.receptor_estado
         FROM rcv_documents r JOIN dtes d ON d.id = r.dte_id
        WHERE r.company_id = $1 AND r.sii_env = $2 AND r.periodo = $3 AND r.operacion = 'ventas'`,
    key,
  );
  for (const o of ours) {
    const estado = receptorEstado(o.in_sii, o.eventos, o.fecha_recepcion, now);
    if (estado !== o.receptor_estado)
      await qr.query(`UPDATE dtes SET receptor_estado = $2 WHERE id = $1`, [o.dte_id, estado]);
  }
  // purchases into the inbox: the SII's state, reception date and what it says of a transfer
  const inbox = uniqueBy(compras, (d) => `${normRut(d.rutEmisor)}|${d.tipoDte}|${d.folio}`).map((d) => ({
    rut_emisor: normRut(d.rutEmisor),
    razon_social_emisor: d.razonSocial ?? null,
    tipo_dte: d.tipoDte,
    folio: d.folio,
    fch_emis: d.fchEmis || null,
    mnt_neto: d.mntNeto,
    mnt_exe: d.mntExe,
    iva: d.iva,
    mnt_total: d.mntTotal,
    fecha_recepcion_sii: parseInstant(d.fechaRecepcion)?.toISOString() ?? null,
    sii_estado: siiEstado(d.estado, d.eventos),
    sii_eventos: d.eventos,
    cesion_estado: d.cesion === undefined ? 'indeterminado' : d.cesion ? 'cedida' : 'no_cedida',
    cesion_cesionario: d.cesion
      ? {
          rut: d.cesion.rutCesionario,
          razon_social: d.cesion.razonSocialCesionario,
          fecha_cesion: d.cesion.fechaCesion,
        }
      : null,
    cesion_consultado_al: d.cesion === undefined ? null : now.toISOString(),
  }));
  for (const chunk of chunks(inbox, CHUNK)) {
    await qr.query(
      `INSERT INTO recepcion_documentos AS r (organization_id, company_id, sii_env, rut_emisor, razon_social_emisor,
          tipo_dte, folio, fch_emis, mnt_neto, mnt_exe, iva, mnt_total, fecha_recepcion_sii, origen, sii_estado, sii_eventos,
          cesion_estado, cesion_cesionario, cesion_consultado_al)
       SELECT $1, $2, $3, x.rut_emisor, x.razon_social_emisor, x.tipo_dte, x.folio, x.fch_emis, x.mnt_neto, x.mnt_exe,
              x.iva, x.mnt_total, x.fecha_recepcion_sii, '{rcv}', x.sii_estado, x.sii_eventos, x.cesion_estado,
              x.cesion_cesionario, x.cesion_consultado_al
         FROM jsonb_to_recordset($4::jsonb) AS x(rut_emisor text, razon_social_emisor text, tipo_dte integer, folio bigint, fch_emis date,
              mnt_neto bigint, mnt_exe bigint, iva bigint, mnt_total bigint, fecha_recepcion_sii timestamptz,
              sii_estado text, sii_eventos text[], cesion_estado text, cesion_cesionario jsonb, cesion_consultado_al timestamptz)
       ON CONFLICT (company_id, sii_env, rut_emisor, tipo_dte, folio) DO UPDATE SET
         fch_emis = COALESCE(r.fch_emis, EXCLUDED.fch_emis),
         razon_social_emisor = COALESCE(r.razon_social_emisor, EXCLUDED.razon_social_emisor),
         fecha_recepcion_sii = EXCLUDED.fecha_recepcion_sii,
         origen = CASE WHEN 'rcv' = ANY(r.origen) THEN r.origen ELSE r.origen || '{rcv}' END,
         sii_estado = EXCLUDED.sii_estado, sii_eventos = EXCLUDED.sii_eventos,
         cesion_estado = EXCLUDED.cesion_estado, cesion_cesionario = EXCLUDED.cesion_cesionario,
         cesion_consultado_al = EXCLUDED.cesion_consultado_al, updated_at = now()`,
      [who.organizationId, who.companyId, who.env, JSON.stringify(chunk)],
    );
  }
  await qr.query(
    `INSERT INTO rcv_periods (company_id, sii_env, periodo, organization_id, status, synced_at, attempts, requested_at)
     VALUES ($1, $2, $3, $4, 'synced', $5, 0, $5)
     ON CONFLICT (company_id, sii_env, periodo) DO UPDATE
       SET status = 'synced', synced_at = $5, attempts = 0, next_attempt_at = NULL, last_error = NULL`,
    [...key, who.organizationId, now],
  );
  return { n, changed };
}

/** rows per statement of the snapshot writes */
const CHUNK = 1000;

function chunks<T>(xs: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** the last of each key (the SII never repeats a document; one statement may not touch a row twice) */
function uniqueBy<T>(xs: readonly T[], key: (x: T) => string): T[] {
  return [...new Map(xs.map((x) => [key(x), x] as const)).values()];
}

function parseInstant(s: string): Date | null {
  if (!s) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A dte-status record as rcv-sync reads it. */
export interface OwnStatus {
  dte_id: string;
  sii_status: string;
  observed_at: string;
}

/**
 * dte-status records (our own documents' statuses, from the compacted topic): the sales row of
 * the register keeps each document's latest, newest observation wins. A batch is ONE statement:
 * the latest record of each document only (every status of a document, queued to the verdict,
 * used to cost an upsert and a row version each), and a row whose observation is not newer is
 * left as it is. Documents of types outside the RCV and unknown documents are skipped. Returns
 * how many rows were written.
 */
export async function applyOwnStatuses(db: SyncDb, records: readonly OwnStatus[]): Promise<number> {
  const latest = new Map<string, OwnStatus>();
  for (const r of records) {
    const seen = latest.get(r.dte_id);
    if (!seen || Date.parse(seen.observed_at) <= Date.parse(r.observed_at)) latest.set(r.dte_id, r);
  }
  if (latest.size === 0) return 0;
  const v = [...latest.values()];
  const rows: unknown[] = await db.query(
    `INSERT INTO rcv_documents AS r (company_id, sii_env, operacion, periodo, rut_emisor, tipo_dte, folio, rut_receptor,
        fch_emis, mnt_neto, mnt_exe, iva, mnt_total, dte_id, own_sii_status, own_observed_at)
     SELECT DISTINCT ON (d.company_id, d.sii_env, upper(replace(d.rut_emisor, '.', '')), d.tipo_dte, d.folio)
            d.company_id, d.sii_env, 'ventas', to_char(d.fecha_emision, 'YYYY-MM'), upper(replace(d.rut_emisor, '.', '')),
            d.tipo_dte, d.folio, d.rut_receptor, d.fecha_emision, d.monto_neto, d.monto_exento, d.iva, d.monto_total,
            d.id, s.sii_status, s.observed_at
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS s(dte_id, sii_status, observed_at)
       JOIN dtes d ON d.id = s.dte_id AND d.tipo_dte = ANY($4)
      ORDER BY d.company_id, d.sii_env, upper(replace(d.rut_emisor, '.', '')), d.tipo_dte, d.folio, s.observed_at DESC
     ON CONFLICT (company_id, sii_env, operacion, rut_emisor, tipo_dte, folio) DO UPDATE SET
       dte_id = EXCLUDED.dte_id,
       own_sii_status = CASE WHEN r.own_observed_at IS NULL OR r.own_observed_at <= EXCLUDED.own_observed_at
                             THEN EXCLUDED.own_sii_status ELSE r.own_sii_status END,
       own_observed_at = GREATEST(r.own_observed_at, EXCLUDED.own_observed_at),
       updated_at = now()
      WHERE r.own_observed_at IS NULL OR r.own_observed_at < EXCLUDED.own_observed_at
         OR (r.own_observed_at = EXCLUDED.own_observed_at AND r.own_sii_status IS DISTINCT FROM EXCLUDED.own_sii_status)
         OR r.dte_id IS DISTINCT FROM EXCLUDED.dte_id
     RETURNING 1`,
    [v.map((x) => x.dte_id), v.map((x) => x.sii_status), v.map((x) => x.observed_at), RCV_TIPOS],
  );
  return rows.length;
}

/** One record (applyOwnStatuses of one): whether a row was written. */
export async function applyOwnStatus(db: SyncDb, v: OwnStatus): Promise<boolean> {
  return (await applyOwnStatuses(db, [v])) > 0;
}

/** Periods due: retries whose backoff passed, and open periods (this month and the last) synced longer ago than `resyncMs`. */
export async function duePeriods(
  db: SyncDb,
  now: Date,
  resyncMs: number,
  limit = 50,
): Promise<{ company_id: string; sii_env: 'cert' | 'prod'; periodo: string }[]> {
  const open = openPeriods(now);
  return db.query(
    `SELECT company_id, sii_env, periodo FROM rcv_periods
      WHERE (status = 'retrying' AND next_attempt_at <= $1)
         OR (status = 'synced' AND periodo = ANY($2) AND synced_at < $3)
      ORDER BY COALESCE(next_attempt_at, synced_at) LIMIT $4`,
    [now, open, new Date(now.getTime() - resyncMs), limit],
  );
}

/** The periods still open for changes: this month and the previous one (Chilean time). */
export function openPeriods(now: Date): string[] {
  const ym = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/Santiago',
    year: 'numeric',
    month: '2-digit',
  })
    .format(now)
    .slice(0, 7);
  const [y, m] = ym.split('-').map(Number) as [number, number];
  const prev = m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
  return [ym, prev];
}
