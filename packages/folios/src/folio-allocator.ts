import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import { returnedRows } from '@dte/database';
import type { SiiEnv } from '@dte/tenancy';

export interface FolioKey {
  organizationId: string;
  companyId: string;
  environment: SiiEnv;
  tipoDte: number;
}

export interface AllocatedFolio {
  folio: number;
  cafId: string;
}

/**
 * THE folio allocator. Hands out the next folio of (organization, company, environment,
 * type) inside the caller's transaction, so the folio and the document that uses it commit or
 * roll back together (a rollback gives the folio back: no gap).
 *
 * Atomicity: the CAF row that supplies the folio is locked with SELECT … FOR UPDATE and its
 * next_folio advanced in the same statement (takeFoliosSql: one round trip). Concurrent allocators (any number of api
 * replicas) queue on that row lock; when the lock holder commits, PostgreSQL re-checks the
 * waiter's WHERE clause against the new row version (READ COMMITTED), so a waiter whose CAF ran
 * out moves on to the next CAF in folio order. Folios therefore come out unique and, across
 * committed transactions, contiguous within each CAF and in CAF order.
 *
 * CAFs are used in folio order (lowest `desde` first), skipping expired ones (their unused
 * folios are a gap the SII allows: an expired CAF cannot be used). When nothing is usable:
 * caf_not_found (no CAF at all for the type, detail.tipoDte), caf_expired (only expired CAFs
 * with folios left) or caf_exhausted (every CAF used up, detail.nextFolio).
 *
 * Must run inside `dataSource.transaction(m => allocateFolio(m, …))`; `allocateFolioNow` wraps
 * one for callers that need nothing else in the transaction.
 */
export async function allocateFolio(m: EntityManager, key: FolioKey, now: Date): Promise<AllocatedFolio> {
  if (!m.queryRunner?.isTransactionActive) {
    throw new Error('allocateFolio must run inside dataSource.transaction(m => …)');
  }
  // one round trip: the SELECT … FOR UPDATE that picks (and locks) the CAF, and the advance
  const taken = await takeFolios(m, key, 1, now);
  if (taken) return { folio: taken.first, cafId: taken.cafId };
  return folioUnavailable(m, key);
}

/** Placeholders (or SQL expressions) for a folio key and the clock, e.g. `$2`. */
export type FolioKeySql = Record<'organizationId' | 'companyId' | 'environment' | 'tipoDte' | 'now', string>;

/**
 * THE choice of the CAF that supplies the next folios: the usable CAF (not deleted, folios left,
 * not expired) lowest in folio order, locked FOR UPDATE. A waiter on that lock sees the row as
 * its holder committed it (READ COMMITTED re-checks the WHERE clause on the new version), so it
 * moves on to the next CAF when this one ran out.
 */
function usableCafSql(p: FolioKeySql & { guard?: string }): string {
  return `SELECT id, next_folio FROM cafs
                     WHERE organization_id = ${p.organizationId} AND company_id = ${p.companyId}
                       AND environment = ${p.environment} AND tipo_dte = ${p.tipoDte}
                       AND deleted_at IS NULL AND next_folio <= hasta
                       AND (expires_at IS NULL OR expires_at > ${p.now})${p.guard ? `\n                       AND ${p.guard}` : ''}
                     ORDER BY desde
                     LIMIT 1
                     FOR UPDATE`;
}

/**
 * Up to `count` consecutive folios of ONE CAF in one statement (allocateFolio and allocateFolios,
 * and the emission's one-statement writes: folio-write.ts), with THE choice of the CAF (usableCafSql) and its lock: returns at most one row (`id` of the
 * CAF, `first` and `last` folio taken, last - first + 1 <= count; fewer when the CAF has fewer
 * left, the rest then comes from the next CAF in another statement); none when no CAF can give
 * one. `first` is next_folio as the lock returned it (SELECT … FOR UPDATE yields the newest
 * version of the row it waited for), and the row cannot change between that lock and the
 * UPDATE, so first..last are exactly the folios this statement moved next_folio past.
 * `guard`: a condition the statement must meet to take any folio (the month's allowance,
 * @dte/billing meterSql: an uncorrelated EXISTS, evaluated before the CAF is locked).
 */
export function takeFoliosSql(p: FolioKeySql & { count: string; guard?: string }): string {
  return `UPDATE cafs c SET next_folio = LEAST(c.hasta + 1, l.next_folio + ${p.count})
          FROM (${usableCafSql(p)}) l
         WHERE c.id = l.id
        RETURNING c.id, l.next_folio AS first, c.next_folio - 1 AS last`;
}

/**
 * Why no folio could be taken for `key`, as the spec's answer (always throws): caf_not_found (no
 * CAF at all for the type), caf_expired (only expired CAFs with folios left) or caf_exhausted
 * (every CAF used up, detail.nextFolio).
 */
export async function folioUnavailable(db: Pick<DataSource, 'query'>, key: FolioKey): Promise<never> {
  const stats: { total: string; left_expired: string; max_hasta: string | null }[] = await db.query(
    `SELECT count(*) AS total,
            count(*) FILTER (WHERE next_folio <= hasta) AS left_expired,
            max(hasta) AS max_hasta
       FROM cafs
      WHERE organization_id = $1 AND company_id = $2 AND environment = $3 AND tipo_dte = $4
        AND deleted_at IS NULL`,
    [key.organizationId, key.companyId, key.environment, key.tipoDte],
  );
  const s = stats[0];
  if (Number(s.total) === 0) {
    throw new ApiError('caf_not_found', `No CAF for document type ${key.tipoDte} in ${key.environment}.`, {
      detail: { tipoDte: key.tipoDte },
    });
  }
  if (Number(s.left_expired) > 0) {
    throw new ApiError('caf_expired', `Every CAF with folios left for type ${key.tipoDte} has expired.`, {
      detail: { tipoDte: key.tipoDte },
    });
  }
  throw new ApiError('caf_exhausted', `No folios left for document type ${key.tipoDte}.`, {
    detail: { tipoDte: key.tipoDte, nextFolio: Number(s.max_hasta) + 1 },
  });
}

/** allocateFolio in a transaction of its own. */
export function allocateFolioNow(db: DataSource, key: FolioKey, now: Date): Promise<AllocatedFolio> {
  return db.transaction((m) => allocateFolio(m, key, now));
}

/**
 * `count` folios of one key at once (a boleta batch), with the same locking as allocateFolio:
 * each usable CAF in folio order is locked and advanced by as many folios as it has left, until
 * the count is met. When the CAFs run out, allocateFolio's own answer (caf_exhausted,
 * caf_expired, caf_not_found) is raised and the caller's transaction rolls every folio back.
 */
export async function allocateFolios(
  m: EntityManager,
  key: FolioKey,
  count: number,
  now: Date,
): Promise<AllocatedFolio[]> {
  if (!m.queryRunner?.isTransactionActive) {
    throw new Error('allocateFolios must run inside dataSource.transaction(m => …)');
  }
  const out: AllocatedFolio[] = [];
  while (out.length < count) {
    const taken = await takeFolios(m, key, count - out.length, now);
    if (!taken) {
      // raises the answer of an empty inventory (or, if a CAF appeared meanwhile, takes a folio of it)
      out.push(await allocateFolio(m, key, now));
      continue;
    }
    for (let f = taken.first; f <= taken.last; f++) out.push({ folio: f, cafId: taken.cafId });
  }
  return out;
}

/** takeFoliosSql in the caller's transaction: the CAF and the folios first..last taken, if any. */
async function takeFolios(
  m: EntityManager,
  key: FolioKey,
  count: number,
  now: Date,
): Promise<{ cafId: string; first: number; last: number } | undefined> {
  const rows = returnedRows<{ id: string; first: string; last: string }>(
    await m.query(
      takeFoliosSql({
        organizationId: '$1',
        companyId: '$2',
        environment: '$3',
        tipoDte: '$4',
        now: '$5',
        count: '$6::int',
      }),
      [key.organizationId, key.companyId, key.environment, key.tipoDte, now, count],
    ),
  );
  const r = rows[0];
  return r ? { cafId: r.id, first: Number(r.first), last: Number(r.last) } : undefined;
}
