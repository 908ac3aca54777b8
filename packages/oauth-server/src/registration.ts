import type { Redis } from 'ioredis';
import { errors } from 'oidc-provider';

/** Dynamic client registration (RFC 7591): who may register, how often, how long a client lasts. */
export interface RegistrationOptions {
  /** false: no registration endpoint (clients must be provisioned otherwise) */
  enabled: boolean;
  /** hosts a redirect URI may point at (empty: any; loopback agents need 127.0.0.1/localhost) */
  allowedRedirectHosts: string[];
  /** registrations per client address and hour */
  perAddressPerHour: number;
  /** registrations per hour over all addresses (bounds Redis growth whatever the addresses) */
  perHour: number;
  /** a client never used for an authorization is forgotten after this many seconds */
  unusedClientTtlSec: number;
}

export const REGISTRATION_DEFAULTS: RegistrationOptions = {
  enabled: true,
  allowedRedirectHosts: [],
  perAddressPerHour: 20,
  perHour: 500,
  unusedClientTtlSec: 24 * 3600,
};

const HOUR_SEC = 3600;

/** One fixed hourly window counter in Redis; the count after this request. */
async function countInWindow(redis: Redis, key: string, nowSec: number): Promise<number> {
  const window = Math.floor(nowSec / HOUR_SEC);
  const k = `${key}:${window}`;
  const [[, n]] = (await redis
    .multi()
    .incr(k)
    .expire(k, HOUR_SEC * 2)
    .exec()) as [[null, number]];
  return n;
}

export function registrationLimiter(redis: Redis, given: Partial<RegistrationOptions> = {}) {
  const options: RegistrationOptions = { ...REGISTRATION_DEFAULTS, ...given };
  const allowed = new Set(options.allowedRedirectHosts.map((h) => h.toLowerCase()));
  return {
    options,
    /** null when this registration may proceed, else which bound refused it and for how long */
    async admit(address: string, nowMs = Date.now()) {
      const nowSec = Math.floor(nowMs / 1000);
      const retryAfterSec = HOUR_SEC - (nowSec % HOUR_SEC);
      // the per-address window first: one noisy address does not consume the global budget
      if ((await countInWindow(redis, `oauth:dcr:addr:${address}`, nowSec)) > options.perAddressPerHour) {
        return { scope: 'per address', retryAfterSec };
      }
      if ((await countInWindow(redis, 'oauth:dcr:all', nowSec)) > options.perHour) {
        return { scope: 'service-wide', retryAfterSec };
      }
      return null;
    },
    /** refuses redirect URIs outside the configured hosts (invalid_redirect_uri) */
    checkRedirectUris(uris: string[] | undefined) {
      if (allowed.size === 0) return;
      for (const uri of uris ?? []) {
        let host: string;
        try {
          host = new URL(uri).hostname.toLowerCase();
        } catch {
          continue; // the provider's own validation answers malformed URIs
        }
        if (!allowed.has(host)) {
          throw new errors.InvalidRedirectUri(`redirect_uris host ${host} is not allowed by this service`);
        }
      }
    },
  };
}
