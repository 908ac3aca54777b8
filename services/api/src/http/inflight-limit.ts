import { metrics } from '@dte/service-runtime';
import type Koa from 'koa';
import type { Config } from '../config';
import { ApiError } from './api-error';

/** Methods that only read: never counted, never refused here. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface InflightLimitOptions {
  /** API_MAX_INFLIGHT: write requests of this process in progress at once; 0 disables the cap */
  max: number;
  /** API_INFLIGHT_RETRY_AFTER_SEC: Retry-After and detail.retryAfterSec of a refusal */
  retryAfterSec: number;
  /** the versioned API's prefix (/api/v1): only writes under it count */
  basePath: string;
}

/**
 * Load shedding of one api process. When `max` write requests (POST, PUT, PATCH, DELETE under
 * /api/v1) are already in progress, the next one is answered at once with **429 `rate_limit`**,
 * `Retry-After` and `detail.retryAfterSec`, before its body is read, its key looked up or any
 * row written: nothing is queued inside the process, so latency stays bounded (about
 * max ÷ throughput) instead of growing without end when more is offered than the process serves.
 * A refused request has done nothing: retrying it with the same Idempotency-Key is safe.
 *
 * Which requests count: writes are what hold a database transaction (and, for emission, the CAF
 * row lock) and what a month-end run sends by the thousand. Reads (GET/HEAD/OPTIONS), the probes
 * (/healthz, /readyz), GET /metrics and the dashboard's pages are neither counted nor refused, so
 * an operator and the orchestrator still see the process while writes are shed. The MCP gateway
 * (/mcp) is outside /api/v1 and has its own per-action caps (mcp.*_rate_limited).
 *
 * Why 429 `rate_limit` and not a 503: the spec's 503 means "authority or dependency unavailable"
 * (sii_unavailable would tell the client the SII is down, db.* that PostgreSQL is), whereas here
 * nothing is down: the api admits requests at a bounded rate, and the catalog's answer for too
 * many requests is 429 `rate_limit` with detail.retryAfterSec, on which the spec's clients back
 * off exponentially with jitter.
 *
 * The counter is per process (each replica protects itself; no shared state on the hot path).
 * Rejections: dte_http_inflight_rejections_total; writes in progress: dte_http_inflight_writes.
 */
export function inflightLimit(opts: InflightLimitOptions): Koa.Middleware {
  const prefix = `${opts.basePath}/`;
  let inFlight = 0;
  return async (ctx, next) => {
    if (opts.max <= 0 || SAFE_METHODS.has(ctx.method) || !ctx.path.startsWith(prefix)) return next();
    if (inFlight >= opts.max) {
      metrics.inflightRejections.inc({ method: ctx.method });
      throw new ApiError(
        'rate_limit',
        `The service is at capacity (${opts.max} write requests in progress); nothing was done, retry after ${opts.retryAfterSec} s with the same Idempotency-Key.`,
        { detail: { retryAfterSec: opts.retryAfterSec }, hint: 'Back off exponentially with jitter.' },
      );
    }
    inFlight += 1;
    metrics.inflightWrites.inc();
    try {
      await next();
    } finally {
      inFlight -= 1;
      metrics.inflightWrites.dec();
    }
  };
}

/** The cap as configured (API_MAX_INFLIGHT, API_INFLIGHT_RETRY_AFTER_SEC) on the writes under `basePath`. */
export function writeInflightLimit(
  config: Pick<Config, 'apiMaxInflight' | 'apiInflightRetryAfterSec'>,
  basePath: string,
): Koa.Middleware {
  return inflightLimit({
    max: config.apiMaxInflight,
    retryAfterSec: config.apiInflightRetryAfterSec,
    basePath,
  });
}
