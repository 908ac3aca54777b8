import type { DataSource, EntityManager } from 'typeorm';
import type { EmissionDeps } from './deps';
import { ApiError } from '@dte/error-catalog';

/**
 * Backpressure on emission (issue 13, "Bad input and faults"). Every accepted document waits in
 * PostgreSQL (the `dtes` row and its outbox rows) until the SII takes it; the relay, signer and
 * uploader hold at most one batch (≤ 500 rows) in memory, so a slow or failing SII does not grow
 * any process's memory, but it would grow the unsent backlog without end. Above
 * `max` documents of a company and environment accepted but not yet taken by the SII (no track
 * id, status `queued` or `signed`: the partial index dtes_unsent_idx), POST /dtes, /dtes/:id/derive,
 * the MCP emit tool, POST /boletas and POST /boletas/batch answer **503 sii_unavailable** with
 * `Retry-After` and `detail.retryAfterSec`, before any folio is taken or anything written.
 *
 * Why 503 sii_unavailable and not 429 rate_limit: the catalog's rate_limit is the client sending
 * too many requests (a per-key quota it can respect by slowing down); here the client may be
 * well inside its quota and the cause is the authority (or the pipeline in front of it) not
 * taking documents: that is the spec's 503 "authority or dependency unavailable; retry with
 * exponential backoff and jitter", and the catalog names it sii_unavailable.
 *
 * Cost: one bounded count (`LIMIT max + 1`) over the partial index, at most once per `cacheMs`
 * per (company, environment) and api process: between counts the last count plus this
 * process's own admissions stands in for it. That is an upper bound of the backlog for one api
 * process (documents only leave the backlog between counts, and only this process adds), so the
 * bound holds to the document with one api process; with K processes each may admit, within one
 * cacheMs, what the others admitted since its last count (overshoot ≤ (K-1) × rate × cacheMs).
 * A refusal is likewise remembered until the next count (a client told to wait Retry-After
 * seconds loses nothing by it). scripts/bench/backlog-check.ts measures the count.
 */
export interface BacklogSettings {
  /** documents unsent per company and environment above which emission is refused; 0 disables */
  max: number;
  /** what Retry-After / detail.retryAfterSec say */
  retryAfterSec: number;
  /** how long a count (plus this process's admissions since) is reused, ms; 0 counts on every POST */
  cacheMs: number;
}

export interface BacklogScope {
  companyId: string;
  environment: 'cert' | 'prod';
}

type Queryable = Pick<DataSource, 'query'> | Pick<EntityManager, 'query'>;

/** Counts the unsent backlog, stopping at `limit` (the statement the gate runs). */
export async function countUnsent(db: Queryable, scope: BacklogScope, limit: number): Promise<number> {
  const rows: { n: number }[] = await db.query(
    `SELECT count(*)::int AS n FROM (
       SELECT 1 FROM dtes
        WHERE company_id = $1 AND sii_env = $2 AND track_id IS NULL AND sii_status IN ('queued', 'signed')
        LIMIT $3) s`,
    [scope.companyId, scope.environment, limit],
  );
  return rows[0]?.n ?? 0;
}

export class BacklogGate {
  private readonly recent = new Map<string, { count: number; at: number }>();

  constructor(
    private readonly settings: BacklogSettings,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Admits `n` new documents of the company and environment, or throws 503 sii_unavailable when
   * the unsent backlog plus them would exceed the bound. Nothing is written either way.
   */
  async admit(db: Queryable, scope: BacklogScope, n = 1): Promise<void> {
    const { max, cacheMs, retryAfterSec } = this.settings;
    if (max <= 0) return;
    const key = `${scope.companyId}:${scope.environment}`;
    const now = this.clock();
    let seen = this.recent.get(key);
    if (!seen || now - seen.at >= cacheMs) {
      seen = { count: await countUnsent(db, scope, max + 1), at: now };
      this.recent.set(key, seen);
    }
    const count = seen.count;
    if (count + n > max) {
      throw new ApiError(
        'sii_unavailable',
        `The SII is not taking this company's documents fast enough: ${count > max ? `more than ${max}` : count} are waiting to be sent in ${scope.environment}. Nothing was issued and no folio used; retry with the same Idempotency-Key after Retry-After seconds, backing off with jitter.`,
        { detail: { retryAfterSec } },
      );
    }
    seen.count += n;
  }
}

const gates = new WeakMap<EmissionDeps, BacklogGate>();

/** The api process's one gate (one cache shared by every emission route). */
export function backlogGateFor(deps: EmissionDeps): BacklogGate {
  let gate = gates.get(deps);
  if (!gate) {
    gate = new BacklogGate({
      max: deps.config.emissionBacklogMax,
      retryAfterSec: deps.config.emissionBacklogRetryAfterSec,
      cacheMs: deps.config.emissionBacklogCacheMs,
    });
    gates.set(deps, gate);
  }
  return gate;
}
