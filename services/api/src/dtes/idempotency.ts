import type { DataSource } from 'typeorm';
import { ApiError } from '../http/api-error';
import { DTE_COLUMNS, type DteRow } from './dte-row';

/**
 * The Idempotency-Key rule of every emission into `dtes` (POST /dtes, derive, POST /boletas): a
 * key belongs to one company and environment (the unique index dtes_company_env_idempotency_key_uq),
 * so two companies of one organization never see each other's documents through it. Same key and
 * body: the document it made; another body: 409 idempotency_conflict.
 */
export interface IdempotencyScope {
  organizationId: string;
  companyId: string;
  environment: 'cert' | 'prod';
}

/** The advisory-lock name that serializes emissions with one key (taken inside the transaction). */
export function idempotencyLockName(scope: IdempotencyScope, key: string): string {
  return `dte-idem:${scope.companyId}:${scope.environment}:${key}`;
}

/** The document an Idempotency-Key created for this company and environment. */
export async function documentByIdempotencyKey(
  db: Pick<DataSource, 'query'>,
  scope: IdempotencyScope,
  key: string,
): Promise<DteRow | undefined> {
  const rows: DteRow[] = await db.query(
    `SELECT ${DTE_COLUMNS} FROM dtes
      WHERE organization_id = $1 AND company_id = $2 AND sii_env = $3 AND idempotency_key = $4`,
    [scope.organizationId, scope.companyId, scope.environment, key],
  );
  return rows[0];
}

/** The existing document when the body is the same; 409 idempotency_conflict otherwise. */
export function replayOrConflict(existing: DteRow, bodyHash: string): DteRow {
  if (existing.body_hash !== bodyHash) {
    throw new ApiError(
      'idempotency_conflict',
      'This Idempotency-Key already issued a document with another body.',
      { detail: { existingDteId: existing.id } },
    );
  }
  return existing;
}
