import { randomUUID } from 'node:crypto';
import { readP12OffThread, type SigningCredential } from '@dte/engine';
import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import { certificateAad, open, seal, type KeyWrapper, mapKmsError } from '@dte/secrets';
import { isUniqueViolation, isUuid, returnedRows } from '@dte/database';
import { normalizeRut } from '@dte/tenancy';

export interface CertificateRow {
  id: string;
  organization_id: string;
  label: string;
  rut: string;
  subject: string;
  serial_number: string;
  fingerprint_sha256: string;
  not_before: Date;
  not_after: Date;
  is_default: boolean;
  created_at: Date;
  deleted_at: Date | null;
}

/**
 * A company-scoped API key sees only the certificates of people who may sign for its company
 * (its own RUT and its declared signers); a session or an organization-wide caller sees all.
 * `$n` is the company id parameter (NULL: no restriction).
 */
const companyScope = (n: number) =>
  `AND ($${n}::uuid IS NULL OR rut IN (SELECT unnest(array_append(c.signer_ruts, c.rut)) FROM companies c WHERE c.id = $${n}::uuid))`;

const COLUMNS = `id, organization_id, label, rut, subject, serial_number, fingerprint_sha256, not_before,
  not_after, is_default, created_at, deleted_at`;

/** The public record of a certificate: metadata only, never the file or its password. */
export function certificateRecord(row: CertificateRow, now: Date) {
  return {
    id: row.id,
    label: row.label,
    rut: row.rut,
    subject: row.subject,
    serial_number: row.serial_number,
    fingerprint_sha256: row.fingerprint_sha256,
    not_before: new Date(row.not_before).toISOString(),
    not_after: new Date(row.not_after).toISOString(),
    expired: new Date(row.not_after).getTime() <= now.getTime(),
    is_default: row.is_default,
    created_at: new Date(row.created_at).toISOString(),
  };
}

const duplicate = (fingerprintSha256: string) =>
  new ApiError('cert.duplicate', 'This certificate is already loaded.', { detail: { fingerprintSha256 } });

const aad = (id: string, part: 'p12' | 'password') => certificateAad(id, part);

/** RUTs that may sign for the organization: each company's own RUT and its declared signers. */
async function allowedSignerRuts(
  db: DataSource | EntityManager,
  organizationId: string,
  companyId: string | null = null,
): Promise<Set<string>> {
  const rows: { rut: string; signer_ruts: string[] }[] = await db.query(
    'SELECT rut, signer_ruts FROM companies WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2::uuid)',
    [organizationId, companyId],
  );
  const out = new Set<string>();
  for (const r of rows) for (const rut of [r.rut, ...r.signer_ruts]) out.add(normalizeRut(rut) ?? rut);
  return out;
}

export async function uploadCertificate(
  db: DataSource,
  keys: KeyWrapper,
  organizationId: string,
  input: { p12: Buffer; password: string; label: string },
  now: Date,
  companyId: string | null = null,
): Promise<CertificateRow> {
  const credential = await readP12OffThread(input.p12, input.password); // cert.invalid, bounded
  const info = credential.info;
  if (info.notAfter.getTime() <= now.getTime()) {
    throw new ApiError('cert_expired', `The certificate expired on ${info.notAfter.toISOString()}.`, {
      detail: { expiredAt: info.notAfter.toISOString() },
    });
  }
  const allowed = await allowedSignerRuts(db, organizationId, companyId);
  const certRut = normalizeRut(info.rut) ?? info.rut;
  if (!allowed.has(certRut)) {
    throw new ApiError(
      'cert_subject_mismatch',
      `The certificate holder ${certRut} may not sign for this emitter.`,
      {
        detail: { certificateRut: certRut, allowedRuts: [...allowed] },
        hint: "A person's certificate must be listed among the company's authorized signers.",
      },
    );
  }
  const id = randomUUID();
  let p12Sealed, passwordSealed;
  try {
    p12Sealed = await seal(keys, input.p12, aad(id, 'p12'));
    passwordSealed = await seal(keys, Buffer.from(input.password, 'utf8'), aad(id, 'password'));
  } catch (err) {
    throw mapKmsError(err, 'cert');
  }
  try {
    return await db.transaction(async (m) => {
      // one default per organization: the first current certificate becomes it
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`certificates:${organizationId}`]);
      const dup: { id: string }[] = await m.query(
        'SELECT id FROM certificates WHERE organization_id = $1 AND fingerprint_sha256 = $2 AND deleted_at IS NULL',
        [organizationId, info.fingerprintSha256],
      );
      if (dup[0]) throw duplicate(info.fingerprintSha256);
      const current: { n: string }[] = await m.query(
        'SELECT count(*) AS n FROM certificates WHERE organization_id = $1 AND is_default AND deleted_at IS NULL',
        [organizationId],
      );
      const rows: CertificateRow[] = await m.query(
        `INSERT INTO certificates (id, organization_id, label, rut, subject, serial_number, fingerprint_sha256,
           not_before, not_after, p12_sealed, password_sealed, is_default)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${COLUMNS}`,
        [
          id,
          organizationId,
          input.label,
          certRut,
          info.subject,
          info.serialNumber,
          info.fingerprintSha256,
          info.notBefore,
          info.notAfter,
          p12Sealed,
          passwordSealed,
          Number(current[0].n) === 0,
        ],
      );
      return rows[0];
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // a concurrent upload of the same file loses the race on the unique index
    if (isUniqueViolation(err, 'certificates_org_fingerprint_uq')) throw duplicate(info.fingerprintSha256);
    throw new ApiError('cert.insert_failed', 'The certificate could not be stored.', { cause: err });
  }
}

export async function listCertificates(
  db: DataSource,
  organizationId: string,
  companyId: string | null = null,
): Promise<CertificateRow[]> {
  return db.query(
    `SELECT ${COLUMNS} FROM certificates WHERE organization_id = $1 AND deleted_at IS NULL ${companyScope(2)}
      ORDER BY created_at, id`,
    [organizationId, companyId],
  );
}

/** A current certificate of the organization; another organization's answers exactly like a missing one. */
async function findCurrent(
  db: DataSource | EntityManager,
  organizationId: string,
  id: string,
  code: 'cert.not_found' | 'cert_not_found',
  lock = false,
  companyId: string | null = null,
): Promise<CertificateRow> {
  const rows: CertificateRow[] = isUuid(id)
    ? await db.query(
        `SELECT ${COLUMNS} FROM certificates WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL
         ${companyScope(3)} ${lock ? 'FOR UPDATE' : ''}`,
        [id, organizationId, companyId],
      )
    : [];
  if (!rows[0]) throw new ApiError(code, 'No such certificate.', { detail: { certificateId: id } });
  return rows[0];
}

export async function activateCertificate(
  db: DataSource,
  organizationId: string,
  id: string,
  now: Date,
  companyId: string | null = null,
): Promise<CertificateRow> {
  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`certificates:${organizationId}`]);
    const row = await findCurrent(m, organizationId, id, 'cert.not_found', true, companyId);
    if (new Date(row.not_after).getTime() <= now.getTime()) {
      throw new ApiError('cert.expired', 'An expired certificate cannot be the default.', {
        detail: { expiredAt: new Date(row.not_after).toISOString() },
      });
    }
    await m.query(
      'UPDATE certificates SET is_default = false WHERE organization_id = $1 AND is_default AND id <> $2',
      [organizationId, id],
    );
    const rows = returnedRows<CertificateRow>(
      await m.query(`UPDATE certificates SET is_default = true WHERE id = $1 RETURNING ${COLUMNS}`, [id]),
    );
    return rows[0];
  });
}

/** Soft delete; the organization's only current certificate stays (cert.last_remaining). */
export async function deleteCertificate(
  db: DataSource,
  organizationId: string,
  id: string,
  now: Date,
  companyId: string | null = null,
): Promise<CertificateRow> {
  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`certificates:${organizationId}`]);
    await findCurrent(m, organizationId, id, 'cert.not_found', true, companyId);
    const count: { n: string }[] = await m.query(
      'SELECT count(*) AS n FROM certificates WHERE organization_id = $1 AND deleted_at IS NULL',
      [organizationId],
    );
    if (Number(count[0].n) <= 1) {
      throw new ApiError(
        'cert.last_remaining',
        'The only certificate of the organization cannot be deleted.',
        {
          hint: 'Upload its replacement first.',
        },
      );
    }
    const rows = returnedRows<CertificateRow>(
      await m.query(
        `UPDATE certificates SET deleted_at = $2, is_default = false WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, now],
      ),
    );
    return rows[0];
  });
}

/**
 * X-Cert-Id rules for signing requests (Authentication 4). With the header: that current
 * certificate of the organization (cert_not_found otherwise). Without it: the only current
 * certificate; none → cert_id_missing; several → cert_id_ambiguous. An expired choice is
 * cert_expired. `path: 'dte'` gives cert_id_missing the DTE path's next_action.
 */
export async function resolveSigningCertificate(
  db: DataSource | EntityManager,
  organizationId: string,
  certIdHeader: string | undefined,
  opts: { path: 'dte' | 'other'; now: Date; companyId?: string | null },
): Promise<CertificateRow> {
  const companyId = opts.companyId ?? null;
  const current = certIdHeader
    ? [await findCurrent(db, organizationId, certIdHeader.trim(), 'cert_not_found', false, companyId)]
    : await listCertificates(db as DataSource, organizationId, companyId);
  return chooseSigningCertificate(current, certIdHeader, opts);
}

/**
 * The X-Cert-Id rules of resolveSigningCertificate over the current certificates already read
 * (`current`: what listCertificates gives for the organization and company, in its order), so
 * an emission that read them with its company profile needs no statement of its own.
 */
export function chooseSigningCertificate(
  current: CertificateRow[],
  certIdHeader: string | undefined,
  opts: { path: 'dte' | 'other'; now: Date },
): CertificateRow {
  let row: CertificateRow | undefined;
  if (certIdHeader) {
    const id = certIdHeader.trim();
    // ids compare as PostgreSQL compares uuids (the rows hold the lower-case form)
    row = isUuid(id) ? current.find((r) => r.id === id.toLowerCase()) : undefined;
    if (!row) throw new ApiError('cert_not_found', 'No such certificate.', { detail: { certificateId: id } });
  } else {
    if (current.length === 0) {
      throw new ApiError(
        'cert_id_missing',
        'No certificate is loaded; upload one, then send its id as X-Cert-Id.',
        {
          ...(opts.path === 'dte' ? { nextAction: 'send_cert_id_header' } : {}),
        },
      );
    }
    if (current.length > 1) {
      throw new ApiError(
        'cert_id_ambiguous',
        'Several certificates are current; say which one with X-Cert-Id.',
        {
          detail: { certificateIds: current.map((r) => r.id) },
        },
      );
    }
    row = current[0];
  }
  assertNotExpired(row, opts.now);
  return row;
}

/**
 * The current certificates of an organization within a company's signers (listCertificates'
 * rows) as a SQL expression: a JSON array, for a statement that already reads the company `c`
 * (the organization is parameter `orgParam`). certificateRowsOf turns it back into rows.
 */
export function currentCertificatesJsonSql(orgParam: string): string {
  return `coalesce((SELECT json_agg(json_build_object('id', ct.id, 'organization_id', ct.organization_id,
             'label', ct.label, 'rut', ct.rut, 'subject', ct.subject, 'serial_number', ct.serial_number,
             'fingerprint_sha256', ct.fingerprint_sha256, 'not_before', ct.not_before, 'not_after', ct.not_after,
             'is_default', ct.is_default, 'created_at', ct.created_at, 'deleted_at', ct.deleted_at)
           ORDER BY ct.created_at, ct.id)
      FROM certificates ct
     WHERE ct.organization_id = ${orgParam} AND ct.deleted_at IS NULL
       AND ct.rut IN (SELECT unnest(array_append(c.signer_ruts, c.rut)))), '[]')`;
}

/** The rows of currentCertificatesJsonSql, with their instants as Date as the driver gives them. */
export function certificateRowsOf(json: unknown[]): CertificateRow[] {
  return (
    json as (Omit<CertificateRow, 'not_before' | 'not_after' | 'created_at'> & {
      not_before: string;
      not_after: string;
      created_at: string;
    })[]
  ).map((r) => ({
    ...r,
    not_before: new Date(r.not_before),
    not_after: new Date(r.not_after),
    created_at: new Date(r.created_at),
    deleted_at: null,
  }));
}

/**
 * The default (active) certificate for a folio request, or the X-Cert-Id one; none → cert.missing.
 * With `companyId` (a company-scoped key) only the certificates of that company's signers count.
 */
export async function resolveActiveCertificate(
  db: DataSource,
  organizationId: string,
  certIdHeader: string | undefined,
  now: Date,
  companyId: string | null = null,
): Promise<CertificateRow> {
  let row: CertificateRow | undefined;
  if (certIdHeader) {
    row = await findCurrent(db, organizationId, certIdHeader.trim(), 'cert.not_found', false, companyId);
  } else {
    const rows: CertificateRow[] = await db.query(
      `SELECT ${COLUMNS} FROM certificates WHERE organization_id = $1 AND is_default AND deleted_at IS NULL
        ${companyScope(2)}`,
      [organizationId, companyId],
    );
    row = rows[0];
    if (!row) throw new ApiError('cert.missing', 'No active certificate: upload one or activate one first.');
  }
  assertNotExpired(row, now);
  return row;
}

function assertNotExpired(row: CertificateRow, now: Date): void {
  if (new Date(row.not_after).getTime() <= now.getTime()) {
    throw new ApiError(
      'cert_expired',
      `The certificate expired on ${new Date(row.not_after).toISOString()}.`,
      {
        detail: { expiredAt: new Date(row.not_after).toISOString(), certificateId: row.id },
      },
    );
  }
}

/** Opens the sealed .p12 and password of a certificate and reads it: in memory only. */
export async function loadSigningCredential(
  db: DataSource,
  keys: KeyWrapper,
  certificateId: string,
): Promise<SigningCredential> {
  const rows: { p12_sealed: unknown; password_sealed: unknown }[] = await db.query(
    'SELECT p12_sealed, password_sealed FROM certificates WHERE id = $1',
    [certificateId],
  );
  if (!rows[0]) throw new ApiError('cert.not_found', 'No such certificate.');
  let p12: Buffer, password: Buffer;
  try {
    p12 = await open(keys, rows[0].p12_sealed, aad(certificateId, 'p12'));
    password = await open(keys, rows[0].password_sealed, aad(certificateId, 'password'));
  } catch (err) {
    throw mapKmsError(err, 'cert');
  }
  try {
    return await readP12OffThread(p12, password.toString('utf8'));
  } finally {
    p12.fill(0);
    password.fill(0);
  }
}
