import {
  billingSettings,
  parseMonthlyLimit,
  type BillingSettings,
  type MonthlyLimit,
  type SiiEnv,
} from '@dte/billing';
import type { EntityManager, DataSource } from 'typeorm';
import { audit } from './audit';
import { parseRut } from './organizations';

/**
 * The operator's billing commands (issue 32), audited like production enablement: set an
 * organization's plan and monthly allowance, record a payment. Every input is checked before
 * anything is written; any error leaves the database as it was (one transaction).
 */

/** The organization named by id or by its RUT, locked for the transaction; an Error when none. */
async function lockOrganization(m: EntityManager, organization: string): Promise<string> {
  const byId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(organization);
  const rut = byId ? null : parseRut(organization);
  if (!byId && (rut === null || rut === 'bad_dv')) {
    throw new Error(`--org: "${organization}" is neither an organization id nor a valid RUT`);
  }
  const org: { id: string }[] = await m.query(
    `SELECT id FROM organizations WHERE ${byId ? 'id = $1::uuid' : 'rut = $1'} FOR UPDATE`,
    [byId ? organization : rut],
  );
  if (!org[0]) throw new Error(`no organization ${organization}`);
  return org[0].id;
}

function checkOperator(operator: string | undefined): string {
  const name = operator?.trim();
  if (!name) throw new Error('--operator: the name of the operator is required');
  return name;
}

export interface SetPlanInput {
  organization: string;
  plan: string;
  /** `N` or `unlimited`, as typed */
  monthlyLimit: string;
  /** default prod */
  env?: string;
  operator: string;
}

export interface SetPlanResult {
  organization_id: string;
  plan: string;
  sii_env: SiiEnv;
  monthly_limit: MonthlyLimit;
  previous: { plan: string | null; monthly_limit: MonthlyLimit | undefined };
}

/**
 * `set-plan`: the organization's plan (one of the configured plans) and the monthly allowance of
 * one environment (prod by default). Raising the limit lets the next emission through at once (the
 * emission reads the allowance in its own statement). Audited as organization.plan_set.
 */
export async function setPlan(
  db: DataSource,
  input: SetPlanInput,
  settings: BillingSettings = billingSettings(),
): Promise<SetPlanResult> {
  const operator = checkOperator(input.operator);
  const plan = input.plan?.trim();
  if (!plan || !settings.plans.includes(plan)) {
    throw new Error(`--plan: unknown plan "${input.plan ?? ''}" (known: ${settings.plans.join(', ')})`);
  }
  const env = (input.env ?? 'prod').trim();
  if (env !== 'cert' && env !== 'prod') throw new Error(`--env: expected cert or prod, got "${input.env}"`);
  if (input.monthlyLimit === undefined)
    throw new Error('--monthly-limit: required (a number or "unlimited")');
  const limit = parseMonthlyLimit(input.monthlyLimit, '--monthly-limit');
  return db.transaction(async (m) => {
    const orgId = await lockOrganization(m, input.organization);
    const before: { plan: string | null; monthly_limit: number | null; has_limit: boolean }[] = await m.query(
      `SELECT (SELECT plan FROM billing_plans WHERE organization_id = $1) AS plan,
              (SELECT monthly_limit FROM billing_allowances WHERE organization_id = $1 AND sii_env = $2) AS monthly_limit,
              EXISTS (SELECT 1 FROM billing_allowances WHERE organization_id = $1 AND sii_env = $2) AS has_limit`,
      [orgId, env],
    );
    await m.query(
      `INSERT INTO billing_plans (organization_id, plan, updated_by) VALUES ($1, $2, $3)
       ON CONFLICT (organization_id) DO UPDATE SET plan = EXCLUDED.plan, updated_at = now(), updated_by = EXCLUDED.updated_by`,
      [orgId, plan, `operator:${operator}`],
    );
    await m.query(
      `INSERT INTO billing_allowances (organization_id, sii_env, monthly_limit, updated_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (organization_id, sii_env) DO UPDATE
         SET monthly_limit = EXCLUDED.monthly_limit, updated_at = now(), updated_by = EXCLUDED.updated_by`,
      [orgId, env, limit, `operator:${operator}`],
    );
    const previous = {
      plan: before[0]!.plan,
      monthly_limit: before[0]!.has_limit ? before[0]!.monthly_limit : undefined,
    };
    await audit(m, {
      organizationId: orgId,
      actor: `operator:${operator}`,
      action: 'organization.plan_set',
      detail: { plan, sii_env: env, monthly_limit: limit, previous },
    });
    return { organization_id: orgId, plan, sii_env: env, monthly_limit: limit, previous };
  });
}

export interface RecordPaymentInput {
  organization: string;
  /** whole CLP, as typed */
  amountClp: string;
  /** YYYY-MM the payment is for (default: the month of `paidOn`) */
  periodo?: string;
  /** YYYY-MM-DD (default: today in Chile) */
  paidOn?: string;
  reference?: string;
  operator: string;
}

/** `record-payment`: a payment received (no payment provider here). Audited as organization.payment_recorded. */
export async function recordPayment(
  db: DataSource,
  input: RecordPaymentInput,
  now: Date = new Date(),
): Promise<{ id: string; organization_id: string; amount_clp: number; periodo: string; paid_on: string }> {
  const operator = checkOperator(input.operator);
  const rawAmount = (input.amountClp ?? '').trim();
  if (!/^[0-9]{1,15}$/.test(rawAmount) || Number(rawAmount) <= 0) {
    throw new Error(
      `--amount: expected a whole number of pesos greater than 0, got "${input.amountClp ?? ''}"`,
    );
  }
  const paidOn = input.paidOn?.trim() || chileDate(now);
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(paidOn) || Number.isNaN(Date.parse(`${paidOn}T00:00:00Z`))) {
    throw new Error(`--paid-on: expected YYYY-MM-DD, got "${input.paidOn}"`);
  }
  const periodo = input.periodo?.trim() || paidOn.slice(0, 7);
  if (!/^[0-9]{4}-(0[1-9]|1[0-2])$/.test(periodo)) {
    throw new Error(`--periodo: expected YYYY-MM, got "${input.periodo}"`);
  }
  return db.transaction(async (m) => {
    const orgId = await lockOrganization(m, input.organization);
    const rows: { id: string }[] = await m.query(
      `INSERT INTO billing_payments (organization_id, amount_clp, periodo, paid_on, reference, recorded_by)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [orgId, rawAmount, periodo, paidOn, input.reference?.trim() || null, `operator:${operator}`],
    );
    await audit(m, {
      organizationId: orgId,
      actor: `operator:${operator}`,
      action: 'organization.payment_recorded',
      detail: { payment_id: rows[0]!.id, amount_clp: Number(rawAmount), periodo, paid_on: paidOn },
    });
    return {
      id: rows[0]!.id,
      organization_id: orgId,
      amount_clp: Number(rawAmount),
      periodo,
      paid_on: paidOn,
    };
  });
}

/** YYYY-MM-DD of `now` in America/Santiago. */
function chileDate(now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(now);
}
