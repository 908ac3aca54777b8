import type { SiiEnv } from '@dte/tenancy';

/**
 * BOLETAS_ENABLED / BHE_ENABLED (issue 16): the spec publishes /boletas and /bhe "pending
 * certification; respond 404 at present". Each flag is read per deployment (Helm values per
 * environment) and takes `false` (default: the routes are not mounted, every path answers the
 * api's own 404 not_found), `true` (both SII environments), or a list of SII environments
 * (`cert`, `prod`, `cert,prod`): then a key of another environment gets the same 404.
 */
export type FeatureFlag = ReadonlySet<SiiEnv>;

export function parseFeatureFlag(raw: string): FeatureFlag {
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'false' || v === '0' || v === 'off' || v === 'no') return new Set();
  if (v === 'true' || v === '1' || v === 'on' || v === 'yes') return new Set<SiiEnv>(['cert', 'prod']);
  const envs = v.split(',').map((s) => s.trim());
  for (const e of envs)
    if (e !== 'cert' && e !== 'prod')
      throw new Error(`expected true, false or a list of cert/prod, got ${JSON.stringify(raw)}`);
  return new Set(envs as SiiEnv[]);
}
