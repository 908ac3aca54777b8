import { randomUUID } from 'node:crypto';
import { parseCaf, type Caf } from '@dte/engine';
import { isServiceError, ApiError } from '@dte/error-catalog';
import { type Principal, assertOrganizationHasRut, assertCafTypeCertified } from '@dte/tenancy';
import type { FoliosDeps } from './deps';
import { loadSigningCredential, resolveActiveCertificate } from '@dte/certificates';
import { storeCaf, type CafRow } from './cafs';
import { FolioGrantError } from './folio-grant-client';

export interface CafRequestBody {
  tipo_dte: number;
  cantidad: number;
  rut_emisor?: string;
}

/** The company a request acts for: the key's, or for a session the one named (or the only one). */
export async function companyOfRequest(
  deps: FoliosDeps,
  principal: Principal,
  rutEmisor: string | undefined,
): Promise<{ id: string; rut: string }> {
  const rows: { id: string; rut: string }[] = await deps.dataSource.query(
    `SELECT id, rut FROM companies
      WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2) AND ($3::text IS NULL OR rut = $3)
      ORDER BY created_at`,
    [principal.organizationId, principal.companyId, rutEmisor ?? null],
  );
  if (rows.length === 0) {
    await assertOrganizationHasRut(deps.dataSource, principal.organizationId);
    throw new ApiError(
      'emisor_rut_mismatch',
      `${rutEmisor ?? 'The emitter'} is not a company of this credential.`,
      {
        detail: { rutEmisor },
      },
    );
  }
  if (rows.length > 1) {
    throw new ApiError(
      'validation_failed',
      'The organization has several companies: say which with rut_emisor.',
      {
        issues: [{ path: '/rut_emisor', message: 'is required when the organization has several companies' }],
      },
    );
  }
  return rows[0];
}

/**
 * POST /caf/request: asks the SII for folios with the organization's active certificate and
 * stores the granted CAF. One request per (organization, environment, company, type) at a time
 * and for CAF_REQUEST_LOCK_SEC after a grant: a Redis lock (SET NX EX) shared by every replica;
 * a request that fails before the grant releases it so the client can retry.
 */
export async function requestCaf(
  deps: FoliosDeps,
  principal: Principal,
  body: CafRequestBody,
  certIdHeader: string | undefined,
  now: Date,
): Promise<CafRow> {
  const company = await companyOfRequest(deps, principal, body.rut_emisor);
  // before the lock and the SII: a grant is irreversible
  await assertCafTypeCertified(deps.dataSource, principal.environment, company.id, body.tipo_dte);
  const lockKey = `caf-request:${principal.organizationId}:${principal.environment}:${company.id}:${body.tipo_dte}`;
  const token = randomUUID();
  const got = await deps.redis.set(lockKey, token, 'EX', deps.config.cafRequestLockSec, 'NX');
  if (got !== 'OK') {
    const ttl = await deps.redis.ttl(lockKey);
    throw new ApiError(
      'caf.request_in_flight',
      `A folio request for type ${body.tipo_dte} is in flight or just finished.`,
      {
        detail: { tipoDte: body.tipo_dte, retryAfterSec: Math.max(1, ttl) },
      },
    );
  }
  const release = async () => {
    // delete only our own lock
    await deps.redis.eval(
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
      1,
      lockKey,
      token,
    );
  };
  let cafXml: string;
  try {
    const cert = await resolveActiveCertificate(
      deps.dataSource,
      principal.organizationId,
      certIdHeader,
      now,
      principal.companyId,
    );
    const credential = await loadSigningCredential(deps.dataSource, deps.keys, cert.id);
    try {
      ({ cafXml } = await deps.folioGrant.requestFolios({
        environment: principal.environment,
        rutEmisor: company.rut,
        tipoDte: body.tipo_dte,
        cantidad: body.cantidad,
        credential,
      }));
    } catch (err) {
      throw grantError(err);
    }
  } catch (err) {
    // A request whose outcome is unknown keeps the lock until it expires: the SII may have
    // granted a range, and a blind retry could be granted a second one.
    if (!(err instanceof ApiError && err.detail?.outcome === 'unknown')) await release();
    throw err;
  }
  // From here the SII has granted the range: never release the lock, never ask again blindly.
  let caf: Caf | undefined;
  try {
    caf = parseCaf(cafXml, { now, expectedTipo: body.tipo_dte });
    return await storeCaf(deps.dataSource, deps.keys, principal, caf, 'sii_request', deps.config.siiCafKeys);
  } catch (err) {
    deps.logger.error(
      // never the CAF XML itself: it holds the stamping private key (the SII portal can re-issue it)
      {
        err,
        organizationId: principal.organizationId,
        tipoDte: body.tipo_dte,
        desde: caf?.desde,
        hasta: caf?.hasta,
      },
      'granted CAF not stored',
    );
    throw new ApiError('caf.persist_failed', 'The SII granted the folios but they could not be stored.', {
      detail: {
        tipoDte: body.tipo_dte,
        ...(caf ? { desde: caf.desde, hasta: caf.hasta } : {}),
        reason: isServiceError(err) ? err.code : 'storage_error',
      },
      hint: 'Do not request again: download the CAF from the SII portal and upload it with POST /caf.',
      cause: err,
    });
  }
}

function grantError(err: unknown): unknown {
  if (!(err instanceof FolioGrantError)) return err;
  const detail = err.siiDetail ? { sii: err.siiDetail } : undefined;
  switch (err.kind) {
    case 'rejected':
      return new ApiError('caf.grant_rejected', `The SII refused the folio grant: ${err.message}`, {
        detail,
        cause: err,
      });
    case 'cert_not_authorized':
      return new ApiError(
        'caf.cert_not_authorized',
        `The certificate may not stamp for this company: ${err.message}`,
        {
          detail,
          cause: err,
        },
      );
    default:
      if (err.outcomeUnknown) {
        return new ApiError(
          'caf.request_failed',
          `The SII folio request got no answer; it may have been granted: ${err.message}`,
          {
            detail: { ...detail, outcome: 'unknown' },
            hint: 'The SII may have granted the range: check the SII portal (and upload that CAF with POST /caf) before requesting again; new requests for this type are refused until the lock expires.',
            cause: err,
          },
        );
      }
      return new ApiError('caf.request_failed', `The SII folio request failed: ${err.message}`, {
        detail,
        cause: err,
      });
  }
}

export interface CafAutoBody {
  tipo_dte: number;
  enabled: boolean;
  threshold?: number;
  cantidad?: number;
  rut_emisor?: string;
}

/** PUT /caf/auto: automatic stamping settings of a type; production keys only. */
export async function setCafAuto(deps: FoliosDeps, principal: Principal, body: CafAutoBody) {
  if (principal.environment !== 'prod') {
    throw new ApiError('caf.auto_requires_production', 'Automatic stamping exists only in production.', {
      detail: { sii_env: principal.environment },
    });
  }
  const company = await companyOfRequest(deps, principal, body.rut_emisor);
  if (body.enabled) {
    await assertCafTypeCertified(deps.dataSource, principal.environment, company.id, body.tipo_dte);
  }
  const rows: {
    tipo_dte: number;
    enabled: boolean;
    threshold: number;
    cantidad: number;
    updated_at: Date;
  }[] = await deps.dataSource.query(
    `INSERT INTO caf_auto_settings (company_id, tipo_dte, organization_id, enabled, threshold, cantidad)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (company_id, tipo_dte) DO UPDATE
         SET enabled = EXCLUDED.enabled, threshold = EXCLUDED.threshold, cantidad = EXCLUDED.cantidad, updated_at = now()
       RETURNING tipo_dte, enabled, threshold, cantidad, updated_at`,
    [
      company.id,
      body.tipo_dte,
      principal.organizationId,
      body.enabled,
      body.threshold ?? deps.config.lowFoliosThreshold,
      body.cantidad ?? 100,
    ],
  );
  const r = rows[0];
  return {
    rut_emisor: company.rut,
    sii_env: principal.environment,
    tipo_dte: r.tipo_dte,
    enabled: r.enabled,
    threshold: r.threshold,
    cantidad: r.cantidad,
    updated_at: new Date(r.updated_at).toISOString(),
  };
}
