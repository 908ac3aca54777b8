import { DTES_IDEMPOTENCY_KEY_CONSTRAINT, isUniqueViolation } from '@dte/database';
import { ServiceError, ApiError } from '@dte/error-catalog';
import type { DataSource } from 'typeorm';
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

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The Idempotency-Key header of an emission (POST /dtes, /boletas, /bhe), trimmed: absent or
 * blank is idempotency_key_missing, longer than MAX_IDEMPOTENCY_KEY_LENGTH validation_failed.
 */
export function idempotencyKeyOf(header: string | undefined): string {
  const key = header?.trim();
  if (!key)
    throw new ApiError('idempotency_key_missing', 'Send an Idempotency-Key header with every emission.');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw new ApiError('validation_failed', 'Idempotency-Key is too long.', {
      issues: [
        { path: 'Idempotency-Key', message: `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` },
      ],
    });
  return key;
}

/**
 * An emission under an Idempotency-Key: `attempt` issues a new document (its INSERT carries the
 * key, so the unique index refuses a second one and that statement writes nothing, its folio
 * included). A key already used answers from its document (`replay`: same body) or 409
 * idempotency_conflict (another body), whatever stopped the attempt: the unique index (a retry,
 * or a concurrent request with the key that committed first), or a rule, the clock, the
 * certificate or the backlog that moved since the original. A new key keeps the attempt's error.
 * Looking the key up only then spares every new emission a statement and needs no lock.
 */
export async function issueOrReplay<T>(
  db: Pick<DataSource, 'query'>,
  scope: IdempotencyScope,
  key: string,
  hash: string,
  attempt: () => Promise<T>,
  replay: (existing: DteRow) => T,
): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (!(err instanceof ServiceError) && !isUniqueViolation(err, DTES_IDEMPOTENCY_KEY_CONSTRAINT)) throw err;
    const known = await documentByIdempotencyKey(db, scope, key);
    if (!known) throw err;
    replayOrConflict(known, hash);
    return replay(known);
  }
}

/** The tables whose rows an Idempotency-Key creates, one key per company and environment each. */
export type IdempotentTable = 'dtes' | 'bhes';

/** The row an Idempotency-Key created in `table` for this company and environment. */
export async function rowByIdempotencyKey<T>(
  db: Pick<DataSource, 'query'>,
  table: IdempotentTable,
  columns: string,
  scope: IdempotencyScope,
  key: string,
): Promise<T | undefined> {
  const rows: T[] = await db.query(
    `SELECT ${columns} FROM ${table}
      WHERE organization_id = $1 AND company_id = $2 AND sii_env = $3 AND idempotency_key = $4`,
    [scope.organizationId, scope.companyId, scope.environment, key],
  );
  return rows[0];
}

/** The document an Idempotency-Key created for this company and environment. */
export function documentByIdempotencyKey(
  db: Pick<DataSource, 'query'>,
  scope: IdempotencyScope,
  key: string,
): Promise<DteRow | undefined> {
  return rowByIdempotencyKey<DteRow>(db, 'dtes', DTE_COLUMNS, scope, key);
}

/**
 * The existing row when the body is the same; 409 idempotency_conflict otherwise (`what` names
 * the row in the message: a document, a BHE).
 */
export function replayOrConflict<T extends { id: string; body_hash: string }>(
  existing: T,
  bodyHash: string,
  what = 'a document',
): T {
  if (existing.body_hash !== bodyHash) {
    throw new ApiError(
      'idempotency_conflict',
      `This Idempotency-Key already issued ${what} with another body.`,
      {
        detail: { existingDteId: existing.id },
      },
    );
  }
  return existing;
}
