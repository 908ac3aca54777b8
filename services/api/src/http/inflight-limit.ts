import { metrics } from '@dte/service-runtime';
import type { Config } from '../config';
import { ApiError } from '@dte/error-catalog';

/** Methods that only read: never counted, never refused here. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface InflightLimitOptions {
  /** API_MAX_INFLIGHT: authenticated write requests of this process in progress at once; 0 disables the cap */
  max: number;
  /** API_MAX_INFLIGHT_PER_ORG: of those, one organization's at once; 0: no share of its own */
  perTenant: number;
  /** API_INFLIGHT_RETRY_AFTER_SEC: Retry-After and detail.retryAfterSec of a refusal */
  retryAfterSec: number;
}

/**
 * Load shedding of one api process, applied by the route chain (routes/route-kit.ts) right after
 * a request is authenticated and authorized, before its body is read or anything written. When
 * `max` authenticated write requests (POST, PUT, PATCH, DELETE under /api/v1) are already in
 * progress, or `perTenant` of the same organization's, the next one is answered at once with
 * **429 `rate_limit`**, `Retry-After` and `detail.retryAfterSec`: nothing is queued inside the
 * process, so latency stays bounded (about max ÷ throughput) instead of growing without end when
 * more is offered than the process serves. A refused request has done nothing: retrying it with
 * the same Idempotency-Key is safe.
 *
 * Which requests count: only authenticated writes (issue 28). Anonymous requests (sign-up, login,
 * a wrong key) never hold a slot, so bodies that never end cannot take the cap from the tenants
 * (the request deadline, API_REQUEST_TIMEOUT_MS, cuts them off anyway), and one organization
 * cannot take it all either: its share is `perTenant`. Reads (GET/HEAD/OPTIONS), the probes,
 * GET /metrics and the dashboard's pages are neither counted nor refused. The MCP gateway (/mcp)
 * has its own per-action caps (mcp.*_rate_limited).
 *
 * Why 429 `rate_limit` and not a 503: the spec's 503 means "authority or dependency unavailable",
 * whereas here nothing is down: the api admits requests at a bounded rate, and the catalog's answer
 * for too many requests is 429 `rate_limit` with detail.retryAfterSec.
 *
 * The counters are per process (each replica protects itself; no shared state on the hot path).
 * Rejections: dte_http_inflight_rejections_total; writes in progress: dte_http_inflight_writes.
 */
export class InflightLimiter {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly opts: InflightLimitOptions) {}

  /**
   * Admits one request of `tenant` (its organization) or throws 429 rate_limit. Answers the
   * release to call once the request is over, or undefined when the request is not counted.
   */
  admit(method: string, tenant: string): (() => void) | undefined {
    if (this.opts.max <= 0 || SAFE_METHODS.has(method)) return undefined;
    const mine = this.byTenant.get(tenant) ?? 0;
    if (this.total >= this.opts.max) this.refuse(method, `${this.opts.max} write requests in progress`);
    if (this.opts.perTenant > 0 && mine >= this.opts.perTenant) {
      this.refuse(method, `${this.opts.perTenant} write requests of your organization in progress`);
    }
    this.total += 1;
    this.byTenant.set(tenant, mine + 1);
    metrics.inflightWrites.inc();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenant, left);
      else this.byTenant.delete(tenant);
      metrics.inflightWrites.dec();
    };
  }

  private refuse(method: string, why: string): never {
    metrics.inflightRejections.inc({ method });
    throw new ApiError(
      'rate_limit',
      `The service is at capacity (${why}); nothing was done, retry after ${this.opts.retryAfterSec} s with the same Idempotency-Key.`,
      { detail: { retryAfterSec: this.opts.retryAfterSec }, hint: 'Back off exponentially with jitter.' },
    );
  }
}

/**
 * The cap as configured (API_MAX_INFLIGHT, API_MAX_INFLIGHT_PER_ORG, API_INFLIGHT_RETRY_AFTER_SEC);
 * an organization's share defaults to three quarters of the cap (48 of 64).
 */
export function writeInflightLimiter(
  config: Pick<Config, 'apiMaxInflight' | 'apiMaxInflightPerOrg' | 'apiInflightRetryAfterSec'>,
): InflightLimiter {
  return new InflightLimiter({
    max: config.apiMaxInflight,
    perTenant: config.apiMaxInflightPerOrg ?? defaultTenantShare(config.apiMaxInflight),
    retryAfterSec: config.apiInflightRetryAfterSec,
  });
}

/** Three quarters of the cap (at least 1): one organization never takes the last quarter. */
export function defaultTenantShare(max: number): number {
  return max <= 0 ? 0 : Math.max(1, Math.floor((max * 3) / 4));
}
