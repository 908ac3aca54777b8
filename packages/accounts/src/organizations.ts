import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { isValidRut, normalizeRut } from '@dte/engine';
import { ServiceError } from '@dte/error-catalog';
import { SituacionError, type SituacionTributaria } from '@dte/sii-client';
import { audit } from './audit';
import type { ControlProof, ControlProofSource } from './control-proof';

/** Where the SII situation of a RUT comes from (the simulator's taxpayer register, or a fake). */
export type SituacionSource = (rut: string) => Promise<SituacionTributaria>;

export const ACCESS_REQUEST_TTL_DAYS = 7;
export const ACCESS_REQUESTS_PER_HOUR = 5;

const RUT_SHAPE = /^0*[0-9]{1,8}-[0-9Kk]$/;

/** `12.345.678-5` → `12345678-5`; null when not RUT-shaped; `bad_dv` when the check digit fails. */
export function parseRut(raw: unknown): string | null | 'bad_dv' {
  if (typeof raw !== 'string') return null;
  const s = raw.replace(/\./g, '').trim();
  if (!RUT_SHAPE.test(s)) return null;
  const n = normalizeRut(s);
  return isValidRut(n) ? n : 'bad_dv';
}

function rutIssue(message: string): ServiceError {
  return new ServiceError('validation_failed', message, { issues: [{ path: '/rut', message }] });
}

/** The situation, or the catalog's errors: bloqueada (with estado), rate_limit, sii_unavailable. */
async function checkedSituacion(source: SituacionSource, rut: string): Promise<SituacionTributaria> {
  let s: SituacionTributaria;
  try {
    s = await source(rut);
  } catch (err) {
    if (err instanceof SituacionError && err.kind === 'rate_limit') {
      throw new ServiceError(
        'situacion_tributaria.rate_limit',
        'El SII limitó las consultas; reintente más tarde.',
        {
          detail: {
            retry_after_seconds: err.retryAfterSeconds ?? 60,
            retryAfterSec: err.retryAfterSeconds ?? 60,
          },
          // the spec's body field (catalog: "retry_after_seconds")
          bodyFields: { retry_after_seconds: err.retryAfterSeconds ?? 60 },
        },
      );
    }
    throw new ServiceError('sii_unavailable', 'No se pudo consultar la situación tributaria en el SII.', {
      detail: { retryAfterSec: 30 },
      cause: err,
    });
  }
  return s;
}

function blocked(s: SituacionTributaria): ServiceError {
  return new ServiceError(
    'situacion_tributaria.bloqueada',
    s.estado === 'rut_inexistente'
      ? 'El RUT no existe en el registro del SII.'
      : 'El RUT no tiene inicio de actividades en el SII.',
    // the spec's "body field `estado`", at the top level; detail keeps it too
    { detail: { estado: s.estado, rut: s.rut }, bodyFields: { estado: s.estado } },
  );
}

export interface OrganizationRecord {
  id: string;
  name: string;
  rut: string;
  company_id: string;
  razon_social: string;
  situacion: { estado: string; checked_at: string };
  prod_enabled: boolean;
}

export interface NewOrganization {
  rut: unknown;
  nombre?: string;
  razon_social?: string;
  giro?: string;
  direccion?: string;
  comuna?: string;
  actividad_economica?: number;
  resolucion_cert_numero?: number;
  resolucion_cert_fecha?: string;
  /** proof of control: the .p12 (base64) of a person the SII authorizes for the RUT, and its password */
  certificado?: { p12_base64: string; password: string };
}

/**
 * Onboards an organization for a company RUT: the RUT must be valid (validation_failed), not
 * onboarded already (empresa.conflict: ask the owners with solicitar-acceso), and active in the
 * SII (situacion_tributaria.bloqueada with estado). Creates organization, company and the
 * caller's owner membership in one transaction; nothing is written when any check fails.
 */
export async function createOrganization(
  db: DataSource,
  situacion: SituacionSource,
  control: ControlProofSource,
  userId: string,
  input: NewOrganization,
  ctx: { ip?: string | null; now: Date },
): Promise<OrganizationRecord> {
  const rut = parseRut(input.rut);
  if (rut === null) throw rutIssue('rut must look like 12345678-5');
  if (rut === 'bad_dv') throw rutIssue('rut has a wrong check digit');
  const taken = async () => {
    const rows: { id: string }[] = await db.query('SELECT id FROM organizations WHERE rut = $1', [rut]);
    return rows[0];
  };
  const conflict = () =>
    new ServiceError(
      'empresa.conflict',
      `La empresa ${rut} ya tiene una organización; solicite acceso a sus dueños.`,
      {
        detail: { rut, solicitar_acceso: '/organizations/solicitar-acceso' },
      },
    );
  if (await taken()) throw conflict();
  const s = await checkedSituacion(situacion, rut);
  if (s.estado !== 'activo') throw blocked(s);
  const prueba = await proveControl(control, rut, input.certificado);
  const razonSocial = (input.razon_social?.trim() || s.razonSocial || input.nombre?.trim() || rut).slice(
    0,
    100,
  );
  const name = (input.nombre?.trim() || razonSocial).slice(0, 100);
  try {
    return await db.transaction(async (m) => {
      const org: { id: string }[] = await m.query(
        `INSERT INTO organizations (name, rut, situacion_estado, situacion_checked_at) VALUES ($1, $2, $3, $4) RETURNING id`,
        [name, rut, s.estado, ctx.now],
      );
      const company: { id: string }[] = await m.query(
        `INSERT INTO companies (organization_id, rut, razon_social, giro, direccion, comuna, actividad_economica,
                                resolucion_cert_numero, resolucion_cert_fecha)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
        [
          org[0].id,
          rut,
          razonSocial,
          input.giro ?? null,
          input.direccion ?? null,
          input.comuna ?? null,
          input.actividad_economica ?? null,
          input.resolucion_cert_numero ?? null,
          input.resolucion_cert_fecha ?? null,
        ],
      );
      await m.query(`INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`, [
        userId,
        org[0].id,
      ]);
      await audit(m, {
        organizationId: org[0].id,
        actor: `user:${userId}`,
        action: 'organization.created',
        detail: {
          rut,
          situacion: s.estado,
          prueba_control: { firmante: prueba.firmante, certificado_sha256: prueba.certificadoSha256 },
        },
        ip: ctx.ip,
      });
      return {
        id: org[0].id,
        name,
        rut,
        company_id: company[0].id,
        razon_social: razonSocial,
        situacion: { estado: s.estado, checked_at: ctx.now.toISOString() },
        prod_enabled: false,
      };
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505' && (await taken())) throw conflict();
    throw err;
  }
}

/**
 * The caller proves control of the RUT before owning it (control-proof.ts): without a certificate
 * validation_failed at /certificado; the proof's own refusals as they come.
 */
async function proveControl(
  control: ControlProofSource,
  rut: string,
  certificado: NewOrganization['certificado'],
): Promise<ControlProof> {
  if (!certificado) {
    throw new ServiceError(
      'validation_failed',
      'Para registrar la empresa presente el certificado digital de una persona autorizada por el SII para ese RUT.',
      {
        issues: [
          {
            path: '/certificado',
            message: 'the .p12 (base64) and password of a signer the SII authorizes for the RUT',
          },
        ],
      },
    );
  }
  return control(rut, Buffer.from(certificado.p12_base64, 'base64'), certificado.password);
}

/** Re-reads the organization's SII situation and stores it; not active: bloqueada (stored). */
export async function revalidateSituacion(
  db: DataSource,
  situacion: SituacionSource,
  orgId: string,
  actor: string,
  ctx: { ip?: string | null; now: Date },
): Promise<{ rut: string; estado: string; checked_at: string }> {
  const rows: { rut: string | null }[] = await db.query('SELECT rut FROM organizations WHERE id = $1', [
    orgId,
  ]);
  const rut = rows[0]?.rut;
  if (!rut) throw new ServiceError('org.rut_missing', 'La organización no tiene RUT registrado.');
  const s = await checkedSituacion(situacion, rut);
  await db.query('UPDATE organizations SET situacion_estado = $2, situacion_checked_at = $3 WHERE id = $1', [
    orgId,
    s.estado,
    ctx.now,
  ]);
  await audit(db, {
    organizationId: orgId,
    actor,
    action: 'organization.situacion_revalidada',
    detail: { estado: s.estado },
    ip: ctx.ip,
  });
  if (s.estado !== 'activo') throw blocked(s);
  return { rut, estado: s.estado, checked_at: ctx.now.toISOString() };
}

export interface AccessRequestRecord {
  id: string;
  organization_id: string | null;
  organizacion: string | null;
  requester_email?: string;
  estado: 'pendiente' | 'aprobada' | 'rechazada';
  created_at: string;
  expires_at: string;
  token?: string;
}

const expiresAt = (created: Date) => new Date(created.getTime() + ACCESS_REQUEST_TTL_DAYS * 86400_000);

/**
 * A signed-in user asks to join the organization of a company RUT: invalid_rut (bad check digit),
 * validation_failed (not RUT-shaped), empresa.not_found (no organization for it),
 * access_request.rate_limit (more than 5 in an hour). A pending request for the same organization
 * is answered again rather than duplicated. The owners see it (with its decision token) in
 * GET /organizations/me/solicitudes-acceso.
 */
export async function requestAccess(
  db: DataSource,
  userId: string,
  rawRut: unknown,
  ctx: { ip?: string | null; now: Date },
): Promise<{ record: AccessRequestRecord; created: boolean }> {
  const rut = parseRut(rawRut);
  if (rut === 'bad_dv') {
    throw new ServiceError('invalid_rut', 'El dígito verificador del RUT no es correcto.', {
      detail: { rut: rawRut },
    });
  }
  if (rut === null) throw rutIssue('rut must look like 12345678-5');
  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`access-request:${userId}`]);
    const org: { id: string; name: string }[] = await m.query(
      'SELECT id, name FROM organizations WHERE rut = $1',
      [rut],
    );
    if (!org[0]) throw new ServiceError('empresa.not_found', `No hay organización para la empresa ${rut}.`);
    const member = await m.query('SELECT 1 FROM memberships WHERE user_id = $1 AND organization_id = $2', [
      userId,
      org[0].id,
    ]);
    const pending: { id: string; created_at: Date }[] = await m.query(
      `SELECT id, created_at FROM access_requests
        WHERE requester_id = $1 AND organization_id = $2 AND status = 'pendiente' AND created_at > $3`,
      [userId, org[0].id, new Date(ctx.now.getTime() - ACCESS_REQUEST_TTL_DAYS * 86400_000)],
    );
    const show = (id: string, created: Date, estado: AccessRequestRecord['estado']): AccessRequestRecord => ({
      id,
      organization_id: org[0].id,
      organizacion: org[0].name,
      estado,
      created_at: new Date(created).toISOString(),
      expires_at: expiresAt(new Date(created)).toISOString(),
    });
    if (member[0]) {
      throw new ServiceError('validation_failed', 'Ya es miembro de esa organización.', {
        issues: [{ path: '/rut', message: 'already a member of this organization' }],
      });
    }
    if (pending[0])
      return { record: show(pending[0].id, pending[0].created_at, 'pendiente'), created: false };
    const recent: { n: number }[] = await m.query(
      `SELECT count(*)::int AS n FROM access_requests WHERE requester_id = $1 AND created_at > $2`,
      [userId, new Date(ctx.now.getTime() - 3600_000)],
    );
    if (recent[0].n >= ACCESS_REQUESTS_PER_HOUR) {
      throw new ServiceError(
        'access_request.rate_limit',
        'Demasiadas solicitudes de acceso en la última hora.',
        {
          detail: { limit: ACCESS_REQUESTS_PER_HOUR, retryAfterSec: 3600 },
        },
      );
    }
    const row: { id: string; created_at: Date }[] = await m.query(
      `INSERT INTO access_requests (organization_id, requester_id, token, created_at) VALUES ($1, $2, $3, $4)
       RETURNING id, created_at`,
      [org[0].id, userId, randomBytes(24).toString('base64url'), ctx.now],
    );
    await audit(m, {
      organizationId: org[0].id,
      actor: `user:${userId}`,
      action: 'access_request.created',
      detail: { access_request_id: row[0].id },
      ip: ctx.ip,
    });
    return { record: show(row[0].id, row[0].created_at, 'pendiente'), created: true };
  });
}

/** Pending (unexpired) access requests of an organization, with their decision tokens (owners only). */
export async function listAccessRequests(
  db: DataSource,
  orgId: string,
  now: Date,
): Promise<AccessRequestRecord[]> {
  const rows: { id: string; email: string; token: string; created_at: Date; name: string }[] = await db.query(
    `SELECT r.id, u.email, r.token, r.created_at, o.name FROM access_requests r
       JOIN users u ON u.id = r.requester_id JOIN organizations o ON o.id = r.organization_id
      WHERE r.organization_id = $1 AND r.status = 'pendiente' AND r.created_at > $2 ORDER BY r.created_at`,
    [orgId, new Date(now.getTime() - ACCESS_REQUEST_TTL_DAYS * 86400_000)],
  );
  return rows.map((r) => ({
    id: r.id,
    organization_id: orgId,
    organizacion: r.name,
    requester_email: r.email,
    estado: 'pendiente',
    created_at: new Date(r.created_at).toISOString(),
    expires_at: expiresAt(new Date(r.created_at)).toISOString(),
    token: r.token,
  }));
}

/**
 * An owner of the target organization approves (membership with `rol`, member by default) or
 * rejects a request by its token: access_request.not_found (unknown token),
 * access_request.expired (older than 7 days or organization gone), forbidden (not an owner
 * there). Deciding again answers the decision already taken.
 */
export async function decideAccess(
  db: DataSource,
  userId: string,
  input: { token: string; decision: 'aprobar' | 'rechazar'; rol?: 'admin' | 'member' },
  ctx: { ip?: string | null; now: Date },
): Promise<AccessRequestRecord> {
  return db.transaction(async (m) => {
    const rows: {
      id: string;
      organization_id: string | null;
      requester_id: string;
      status: AccessRequestRecord['estado'];
      created_at: Date;
      name: string | null;
    }[] = await m.query(
      `SELECT r.id, r.organization_id, r.requester_id, r.status, r.created_at, o.name FROM access_requests r
         LEFT JOIN organizations o ON o.id = r.organization_id WHERE r.token = $1 FOR UPDATE OF r`,
      [input.token],
    );
    const r = rows[0];
    if (!r)
      throw new ServiceError('access_request.not_found', 'No existe una solicitud de acceso con ese token.');
    const show = (estado: AccessRequestRecord['estado']): AccessRequestRecord => ({
      id: r.id,
      organization_id: r.organization_id,
      organizacion: r.name,
      estado,
      created_at: new Date(r.created_at).toISOString(),
      expires_at: expiresAt(new Date(r.created_at)).toISOString(),
    });
    if (!r.organization_id) {
      throw new ServiceError('access_request.expired', 'La organización de la solicitud ya no existe.');
    }
    const role: { role: string }[] = await m.query(
      'SELECT role FROM memberships WHERE user_id = $1 AND organization_id = $2',
      [userId, r.organization_id],
    );
    if (role[0]?.role !== 'owner') {
      throw new ServiceError(
        'forbidden',
        'Solo un dueño (owner) de la organización puede decidir solicitudes.',
        {
          detail: { role: role[0]?.role ?? null, allowedRoles: ['owner'] },
        },
      );
    }
    if (r.status !== 'pendiente') return show(r.status);
    if (expiresAt(new Date(r.created_at)).getTime() <= ctx.now.getTime()) {
      throw new ServiceError('access_request.expired', 'La solicitud tiene más de 7 días.', {
        detail: { expired_at: expiresAt(new Date(r.created_at)).toISOString() },
      });
    }
    const estado = input.decision === 'aprobar' ? 'aprobada' : 'rechazada';
    await m.query(
      `UPDATE access_requests SET status = $2, role = $3, decided_by = $4, decided_at = $5 WHERE id = $1`,
      [r.id, estado, estado === 'aprobada' ? (input.rol ?? 'member') : null, userId, ctx.now],
    );
    if (estado === 'aprobada') {
      await m.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, organization_id) DO NOTHING`,
        [r.requester_id, r.organization_id, input.rol ?? 'member'],
      );
    }
    await audit(m, {
      organizationId: r.organization_id,
      actor: `user:${userId}`,
      action: estado === 'aprobada' ? 'access_request.approved' : 'access_request.rejected',
      detail: { access_request_id: r.id, requester: r.requester_id, rol: input.rol ?? 'member' },
      ip: ctx.ip,
    });
    return show(estado);
  });
}

/**
 * The operator's production enablement: opens `organizations.prod_enabled` (and adds certified
 * document types to its companies when given), recorded in the audit log with the operator's name.
 */
export async function enableProduction(
  db: DataSource,
  input: { organization: string; operator: string; tipos?: number[]; reason?: string },
): Promise<{ organization_id: string; prod_enabled: true; prod_tipos: number[] }> {
  return db.transaction(async (m) => {
    const byId = /^[0-9a-f-]{36}$/i.test(input.organization);
    const rut = byId ? null : parseRut(input.organization);
    const org: { id: string }[] = await m.query(
      `SELECT id FROM organizations WHERE ${byId ? 'id = $1::uuid' : 'rut = $1'} FOR UPDATE`,
      [byId ? input.organization : rut],
    );
    if (!org[0]) throw new Error(`no organization ${input.organization}`);
    await m.query('UPDATE organizations SET prod_enabled = true WHERE id = $1', [org[0].id]);
    if (input.tipos?.length) {
      await m.query(
        `UPDATE companies SET prod_tipos = ARRAY(
           SELECT DISTINCT x FROM unnest(prod_tipos || $2::integer[]) x ORDER BY x) WHERE organization_id = $1`,
        [org[0].id, input.tipos],
      );
    }
    const tipos: { t: number[] }[] = await m.query(
      `SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') AS t FROM companies, unnest(prod_tipos) x WHERE organization_id = $1`,
      [org[0].id],
    );
    await audit(m, {
      organizationId: org[0].id,
      actor: `operator:${input.operator}`,
      action: 'organization.production_enabled',
      detail: { tipos: input.tipos ?? [], reason: input.reason ?? null },
    });
    return { organization_id: org[0].id, prod_enabled: true, prod_tipos: tipos[0].t };
  });
}
