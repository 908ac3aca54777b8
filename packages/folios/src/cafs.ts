import { randomUUID } from 'node:crypto';
import { parseCaf, type Caf } from '@dte/engine';
import type { DataSource } from 'typeorm';
import { type Principal, type SiiEnv, assertOrganizationHasRut, assertCafTypeCertified } from '@dte/tenancy';
import { ApiError } from '@dte/error-catalog';
import { assertCafSignedBySii, type SiiCafKeys } from './sii-caf-keys';
import { cafKeyAad, seal, type KeyWrapper, mapKmsError } from '@dte/secrets';
import { isUuid, returnedRows } from '@dte/database';
import type { CafDocumentsProbe } from './documents-probe';

export interface CafRow {
  id: string;
  organization_id: string;
  company_id: string;
  environment: SiiEnv;
  tipo_dte: number;
  rut_emisor: string;
  desde: string;
  hasta: string;
  next_folio: string;
  fecha_autorizacion: string;
  expires_at: Date | null;
  idk: number;
  source: string;
  created_at: Date;
  deleted_at: Date | null;
}

const COLUMNS = `id, organization_id, company_id, environment, tipo_dte, rut_emisor, desde, hasta, next_folio,
  to_char(fecha_autorizacion, 'YYYY-MM-DD') AS fecha_autorizacion, expires_at, idk, source, created_at, deleted_at`;

/** The SII key that signed a CAF names its environment: IDK 100 is certification, any other production. */
export function environmentOfIdk(idk: number): SiiEnv {
  return idk === 100 ? 'cert' : 'prod';
}

export function remainingOf(row: CafRow, now: Date): number {
  if (row.expires_at && new Date(row.expires_at).getTime() <= now.getTime()) return 0;
  return Math.max(0, Number(row.hasta) - Number(row.next_folio) + 1);
}

export function cafRecord(row: CafRow, now: Date) {
  const expired = !!row.expires_at && new Date(row.expires_at).getTime() <= now.getTime();
  return {
    id: row.id,
    tipo_dte: row.tipo_dte,
    sii_env: row.environment,
    rut_emisor: row.rut_emisor,
    desde: Number(row.desde),
    hasta: Number(row.hasta),
    next_folio: Number(row.next_folio),
    remaining: remainingOf(row, now),
    fecha_autorizacion: row.fecha_autorizacion,
    expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    expired,
    exhausted: Number(row.next_folio) > Number(row.hasta),
    source: row.source,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** The company a CAF is for: its RE must be the key's company (or, for a session, one of the organization's). */
async function companyForCaf(db: DataSource, principal: Principal, rutEmisor: string): Promise<string> {
  const rows: { id: string; rut: string }[] = await db.query(
    'SELECT id, rut FROM companies WHERE organization_id = $1 AND rut = $2 AND ($3::uuid IS NULL OR id = $3)',
    [principal.organizationId, rutEmisor, principal.companyId],
  );
  if (!rows[0]) {
    await assertOrganizationHasRut(db, principal.organizationId);
    throw new ApiError('emisor_rut_mismatch', `The CAF is for ${rutEmisor}, which is not this emitter.`, {
      detail: { rutEmisor },
    });
  }
  return rows[0].id;
}

/** Stores a parsed CAF for the principal's organization; shared by upload and the SII grant. */
export async function storeCaf(
  db: DataSource,
  keys: KeyWrapper,
  principal: Principal,
  caf: Caf,
  source: 'upload' | 'sii_request',
  siiCafKeys?: SiiCafKeys,
): Promise<CafRow> {
  const environment = environmentOfIdk(caf.idk);
  if (environment !== principal.environment) {
    throw new ApiError(
      'sii_env_mismatch',
      `The CAF belongs to ${environment}, the credential to ${principal.environment}.`,
      {
        detail: { caf: environment, credencial: principal.environment, idk: caf.idk },
      },
    );
  }
  // the SII's FRMA over the range: a forged or altered CAF never becomes folios
  if (siiCafKeys) assertCafSignedBySii(caf, environment, siiCafKeys);
  const companyId = await companyForCaf(db, principal, caf.rutEmisor);
  await assertCafTypeCertified(db, environment, companyId, caf.tipoDte);
  const id = randomUUID();
  let sealed;
  try {
    sealed = await seal(keys, Buffer.from(caf.rsaPrivateKeyPem, 'utf8'), cafKeyAad(id));
  } catch (err) {
    throw mapKmsError(err, 'caf');
  }
  return db.transaction(async (m) => {
    // ranges of one (company, environment, type) never overlap; deleted CAFs keep their range
    // registered so a re-upload cannot hand out their folios again
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `cafs:${companyId}:${environment}:${caf.tipoDte}`,
    ]);
    const overlap: { id: string; desde: string; hasta: string }[] = await m.query(
      `SELECT id, desde, hasta FROM cafs
        WHERE company_id = $1 AND environment = $2 AND tipo_dte = $3 AND desde <= $5 AND hasta >= $4
        LIMIT 1`,
      [companyId, environment, caf.tipoDte, caf.desde, caf.hasta],
    );
    if (overlap[0]) {
      throw new ApiError(
        'caf.duplicate',
        `Folios ${caf.desde}-${caf.hasta} of type ${caf.tipoDte} are already registered.`,
        {
          detail: {
            tipoDte: caf.tipoDte,
            desde: caf.desde,
            hasta: caf.hasta,
            existing: { desde: Number(overlap[0].desde), hasta: Number(overlap[0].hasta) },
          },
        },
      );
    }
    try {
      const rows: CafRow[] = await m.query(
        `INSERT INTO cafs (id, organization_id, company_id, environment, tipo_dte, rut_emisor, desde, hasta,
           next_folio, fecha_autorizacion, expires_at, idk, caf_xml, rsa_public_key_pem, rsa_private_key_sealed, source)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7, $9, $10, $11, $12, $13, $14, $15) RETURNING ${COLUMNS}`,
        [
          id,
          principal.organizationId,
          companyId,
          environment,
          caf.tipoDte,
          caf.rutEmisor,
          caf.desde,
          caf.hasta,
          caf.fechaAutorizacion,
          caf.expiresAt,
          caf.idk,
          caf.cafElementXml,
          caf.rsaPublicKeyPem,
          sealed,
          source,
        ],
      );
      return rows[0];
    } catch (err) {
      throw new ApiError('caf.insert_failed', 'The CAF could not be stored.', { cause: err });
    }
  });
}

export async function uploadCaf(
  db: DataSource,
  keys: KeyWrapper,
  principal: Principal,
  input: { xml: Buffer; tipoEsperado?: number },
  now: Date,
  siiCafKeys?: SiiCafKeys,
): Promise<CafRow> {
  // caf.parse_error, caf.wrong_tipo, caf_expired
  const caf = parseCaf(input.xml, {
    now,
    ...(input.tipoEsperado === undefined ? {} : { expectedTipo: input.tipoEsperado }),
  });
  const certs: { n: string }[] = await db.query(
    'SELECT count(*) AS n FROM certificates WHERE organization_id = $1 AND deleted_at IS NULL',
    [principal.organizationId],
  );
  if (Number(certs[0].n) === 0) {
    throw new ApiError('caf.no_certificate', 'Upload a signing certificate before the CAF.');
  }
  return storeCaf(db, keys, principal, caf, 'upload', siiCafKeys);
}

/** CAFs of the principal's environment (and company, for a key), with per-type totals and alerts. */
export async function cafInventory(db: DataSource, principal: Principal, lowThreshold: number, now: Date) {
  const rows: CafRow[] = await db.query(
    `SELECT ${COLUMNS} FROM cafs
      WHERE organization_id = $1 AND environment = $2 AND ($3::uuid IS NULL OR company_id = $3) AND deleted_at IS NULL
      ORDER BY rut_emisor, tipo_dte, desde`,
    [principal.organizationId, principal.environment, principal.companyId],
  );
  const groups = new Map<
    string,
    { rut_emisor: string; tipo_dte: number; remaining: number; next_folio: number | null }
  >();
  for (const row of rows) {
    const k = `${row.rut_emisor}|${row.tipo_dte}`;
    const g = groups.get(k) ?? {
      rut_emisor: row.rut_emisor,
      tipo_dte: row.tipo_dte,
      remaining: 0,
      next_folio: null,
    };
    const left = remainingOf(row, now);
    g.remaining += left;
    if (left > 0 && g.next_folio === null) g.next_folio = Number(row.next_folio);
    groups.set(k, g);
  }
  return {
    data: rows.map((r) => cafRecord(r, now)),
    summary: [...groups.values()].map((g) => ({
      ...g,
      sii_env: principal.environment,
      low_folios_threshold: lowThreshold,
      alerts: g.remaining <= lowThreshold ? ['low_folios'] : [],
    })),
    next_cursor: null,
  };
}

export async function deleteCaf(
  db: DataSource,
  probe: CafDocumentsProbe,
  principal: Principal,
  id: string,
  now: Date,
): Promise<CafRow> {
  const notFound = () => new ApiError('caf.not_found', 'No such CAF.', { detail: { cafId: id } });
  if (!isUuid(id)) throw notFound();
  return db.transaction(async (m) => {
    // the row lock also waits for any folio allocation in flight on this CAF
    const rows: CafRow[] = await m.query(
      `SELECT ${COLUMNS} FROM cafs
        WHERE id = $1 AND organization_id = $2 AND ($3::uuid IS NULL OR company_id = $3) AND deleted_at IS NULL
        FOR UPDATE`,
      [id, principal.organizationId, principal.companyId],
    );
    const row = rows[0];
    if (!row) throw notFound();
    if (row.environment !== principal.environment) {
      throw new ApiError(
        'sii_env_mismatch',
        `The CAF belongs to ${row.environment}, the credential to ${principal.environment}.`,
        {
          detail: { caf: row.environment, credencial: principal.environment },
        },
      );
    }
    const usage = await probe.usage(row.id);
    if (usage.ceded > 0) {
      throw new ApiError('caf.has_ceded_dtes', 'A document issued with this CAF was ceded; the CAF stays.', {
        detail: { ceded: usage.ceded },
      });
    }
    if (usage.accepted > 0) {
      throw new ApiError(
        'caf.has_accepted_dtes',
        'Documents accepted by the SII use this CAF; it is kept 6 years.',
        {
          detail: { accepted: usage.accepted },
        },
      );
    }
    const out = returnedRows<CafRow>(
      await m.query(`UPDATE cafs SET deleted_at = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, now]),
    );
    return out[0];
  });
}
