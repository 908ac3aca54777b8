/**
 * The plan catalog and the default allowances: configuration, not code (the spec names the quota
 * but shows no number). Read once from the environment:
 *
 * - `BILLING_PLANS`: the plan names an operator may set (comma-separated; default
 *   `free,pro,empresa`); `free` is always one of them, every organization's plan until set.
 * - `BILLING_FREE_PROD_LIMIT`: documents a month in production of an organization whose allowance
 *   was never set (default 100; `unlimited` for none).
 * - `BILLING_CERT_LIMIT`: the same for certification (default `unlimited`).
 *
 * An operator's `set-plan` writes the organization's own allowance, which then wins.
 */
export type SiiEnv = 'cert' | 'prod';

/** null = unlimited */
export type MonthlyLimit = number | null;

export interface BillingSettings {
  plans: readonly string[];
  defaultLimits: Record<SiiEnv, MonthlyLimit>;
}

export const FREE_PLAN = 'free';

/** `N` (a whole number ≥ 0, at most 2^31-1) or `unlimited`; anything else is an Error naming `what`. */
export function parseMonthlyLimit(raw: string, what: string): MonthlyLimit {
  const v = raw.trim();
  if (v === 'unlimited') return null;
  if (!/^[0-9]{1,10}$/.test(v) || Number(v) > 2147483647) {
    throw new Error(`${what}: expected a whole number of documents (0 or more) or "unlimited", got "${raw}"`);
  }
  return Number(v);
}

export function loadBillingSettings(env: NodeJS.ProcessEnv = process.env): BillingSettings {
  const names = (env.BILLING_PLANS ?? 'free,pro,empresa')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!/^[a-z0-9][a-z0-9_-]{0,39}$/.test(n)) throw new Error(`BILLING_PLANS: "${n}" is not a plan name`);
  }
  return {
    plans: [...new Set([FREE_PLAN, ...names])],
    defaultLimits: {
      prod: parseMonthlyLimit(env.BILLING_FREE_PROD_LIMIT ?? '100', 'BILLING_FREE_PROD_LIMIT'),
      cert: parseMonthlyLimit(env.BILLING_CERT_LIMIT ?? 'unlimited', 'BILLING_CERT_LIMIT'),
    },
  };
}

let current: BillingSettings | undefined;

/** The settings of this process (read from the environment the first time). */
export function billingSettings(): BillingSettings {
  current ??= loadBillingSettings();
  return current;
}
