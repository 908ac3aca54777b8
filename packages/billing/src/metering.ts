import { ServiceError } from '@dte/error-catalog';
import { DataSource, type EntityManager } from 'typeorm';
import { periodoOf } from './period';
import { billingSettings, type MonthlyLimit, type SiiEnv } from './settings';

/** Whose month a document counts in. */
export interface MeterKey {
  organizationId: string;
  environment: SiiEnv;
  /** the emission's clock: its month in America/Santiago is the one charged */
  now: Date;
}

/** Placeholders (or SQL expressions) of a meter key, e.g. `$2`. */
export type MeterKeySql = Record<'organizationId' | 'environment' | 'periodo' | 'defaultLimit', string>;

/** The 80 % and 100 % thresholds: each gives one notice per organization, environment and month. */
export const NOTICE_THRESHOLDS = [80, 100] as const;

/**
 * THE monthly allowance of (organization, environment), NULL for unlimited: the operator's row of
 * billing_allowances when there is one, else the configured default (`defaultLimit`).
 */
export function monthlyLimitSql(
  p: Pick<MeterKeySql, 'organizationId' | 'environment' | 'defaultLimit'>,
): string {
  return `(SELECT CASE WHEN a.organization_id IS NULL THEN ${p.defaultLimit}::int ELSE a.monthly_limit END
             FROM (VALUES (1)) one LEFT JOIN billing_allowances a
               ON a.organization_id = ${p.organizationId}::uuid AND a.sii_env = ${p.environment}::text)`;
}

/**
 * THE metering of an emission, as common table expressions of the statement (or transaction) that
 * takes the folios:
 *
 * - `room` (CTE `billing_room`) locks the month's usage row FOR UPDATE only when `count` more
 *   documents fit in the allowance. A concurrent emission waits on that lock; when its holder
 *   commits, PostgreSQL re-checks the condition on the new row (READ COMMITTED), so two requests
 *   can never both take the last place: the limit is never overshot.
 * - `guard` is the condition the folio-taking statement adds: no room, no folio taken (and nothing
 *   written: a refused request uses no folio).
 * - `charge` (CTEs `billing_charge`, `billing_notice`) adds the documents actually written
 *   (`written`, an SQL count) to the row `room` locked, and records the 80 % / 100 % notices the
 *   new total reaches (at most once per threshold and month: the notice's primary key).
 *
 * The usage row must exist before the statement (ensureUsageRow): a row inserted by the same
 * statement would not be visible to its lock.
 */
export function meterSql(p: MeterKeySql & { count: string; written: string }): {
  room: string;
  guard: string;
  charge: string;
} {
  const where = `u.organization_id = ${p.organizationId}::uuid AND u.sii_env = ${p.environment}::text
                 AND u.periodo = ${p.periodo}::text`;
  return {
    room: `billing_room AS (
       SELECT u.used, l.lim FROM billing_usage u, (SELECT ${monthlyLimitSql(p)} AS lim) l
        WHERE ${where} AND (l.lim IS NULL OR u.used + ${p.count} <= l.lim)
          FOR UPDATE OF u)`,
    guard: `EXISTS (SELECT 1 FROM billing_room)`,
    charge: `billing_charge AS (
       UPDATE billing_usage u SET used = u.used + ${p.written} FROM billing_room r
        WHERE ${where}
       RETURNING u.used, r.lim),
     billing_notice AS (
       INSERT INTO billing_notices (organization_id, sii_env, periodo, threshold, used, monthly_limit)
       SELECT ${p.organizationId}::uuid, ${p.environment}::text, ${p.periodo}::text, t.t, c.used, c.lim
         FROM billing_charge c, (VALUES ${NOTICE_THRESHOLDS.map((t) => `(${t})`).join(', ')}) t(t)
        WHERE c.lim > 0 AND c.used * 100 >= c.lim * t.t
       ON CONFLICT DO NOTHING)`,
  };
}

/** The values of a meter key's placeholders: organization, environment, month, default limit. */
export function meterParams(key: MeterKey): {
  organizationId: string;
  environment: SiiEnv;
  periodo: string;
  defaultLimit: MonthlyLimit;
} {
  return {
    organizationId: key.organizationId,
    environment: key.environment,
    periodo: periodoOf(key.now),
    defaultLimit: billingSettings().defaultLimits[key.environment],
  };
}

/** usage rows known to exist, per database (a month's row is inserted once, never deleted) */
const ensured = new WeakMap<object, Set<string>>();

function cacheOf(q: DataSource | EntityManager): Set<string> {
  const owner = q instanceof DataSource ? q : q.connection;
  let set = ensured.get(owner);
  if (!set) ensured.set(owner, (set = new Set()));
  return set;
}

/**
 * Makes sure the month's usage row of (organization, environment) exists, so the emission's
 * statement can lock it (meterSql). One INSERT … ON CONFLICT DO NOTHING the first time a process
 * meets the month outside a transaction, remembered afterwards (the row is never deleted); inside
 * a transaction (notes over own documents, boleta batches, BHE) it runs every time, since that
 * transaction may still roll the row back.
 */
export async function ensureUsageRow(q: DataSource | EntityManager, key: MeterKey): Promise<void> {
  const { organizationId, environment, periodo } = meterParams(key);
  const cache = cacheOf(q);
  const id = `${organizationId}|${environment}|${periodo}`;
  if (cache.has(id)) return;
  await q.query(
    `INSERT INTO billing_usage (organization_id, sii_env, periodo) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [organizationId, environment, periodo],
  );
  // remembered only once committed: a row inserted inside a transaction that rolls back is gone
  const inTransaction = !(q instanceof DataSource) && q.queryRunner?.isTransactionActive;
  if (!inTransaction) cache.add(id);
}

/** The month's use and allowance of (organization, environment) as they stand. */
export async function usageOf(
  q: Pick<DataSource, 'query'>,
  key: MeterKey,
): Promise<{ usedThisMonth: number; limit: MonthlyLimit; rowExists: boolean }> {
  const p = meterParams(key);
  const rows: { used: number | null; lim: number | null }[] = await q.query(
    `SELECT (SELECT used FROM billing_usage WHERE organization_id = $1::uuid AND sii_env = $2::text AND periodo = $3::text) AS used,
            ${monthlyLimitSql({ organizationId: '$1', environment: '$2', defaultLimit: '$4' })} AS lim`,
    [p.organizationId, p.environment, p.periodo, p.defaultLimit],
  );
  const r = rows[0]!;
  return { usedThisMonth: r.used ?? 0, limit: r.lim, rowExists: r.used !== null };
}

/** The spec's 402: the month's allowance cannot take `requested` more documents. */
export function freeTierExceeded(usedThisMonth: number, limit: number, requested = 1): ServiceError {
  return new ServiceError(
    'billing.free_tier_exceeded',
    requested === 1
      ? `The monthly allowance of ${limit} documents is used up (${usedThisMonth} issued this month).`
      : `The monthly allowance of ${limit} documents cannot take ${requested} more (${usedThisMonth} issued this month).`,
    { detail: { usedThisMonth, limit, ...(requested === 1 ? {} : { requested }) } },
  );
}

/**
 * After an emission's statement wrote nothing: the 402 when the allowance is why (`requested`
 * documents do not fit), else undefined (the folio is why: the caller says which). Throws an
 * internal error if the usage row disappeared (it is never deleted), forgetting it first.
 */
export async function meterRefusal(
  q: DataSource | EntityManager,
  key: MeterKey,
  requested = 1,
): Promise<ServiceError | undefined> {
  const u = await usageOf(q, key);
  if (!u.rowExists) {
    cacheOf(q).clear();
    throw new Error('billing_usage row missing for an emission (it is never deleted)');
  }
  if (u.limit !== null && u.usedThisMonth + requested > u.limit) {
    return freeTierExceeded(u.usedThisMonth, u.limit, requested);
  }
  return undefined;
}

/**
 * Inside the caller's transaction, before its folios: charges `count` documents to the month, or
 * throws the 402 (nothing charged) when they do not fit — a batch is refused whole. The row stays
 * locked until the transaction ends, so concurrent emissions of the organization and environment
 * wait and then see the new total. For emissions that write in the same transaction after it
 * (boleta batches, BHE); one-statement emissions use meterSql directly.
 */
export async function chargeDocuments(m: EntityManager, key: MeterKey, count: number): Promise<number> {
  if (!m.queryRunner?.isTransactionActive) {
    throw new Error('chargeDocuments must run inside dataSource.transaction(m => …)');
  }
  await ensureUsageRow(m, key);
  const p = meterParams(key);
  const sql = meterSql({
    organizationId: '$1',
    environment: '$2',
    periodo: '$3',
    defaultLimit: '$4',
    count: '$5::int',
    written: '$5::int',
  });
  const rows: { used: number }[] = await m.query(
    `WITH ${sql.room}, ${sql.charge} SELECT used FROM billing_charge`,
    [p.organizationId, p.environment, p.periodo, p.defaultLimit, count],
  );
  if (rows[0]) return rows[0].used;
  throw (
    (await meterRefusal(m, key, count)) ??
    new Error('billing: the allowance refused a charge it has room for')
  );
}
