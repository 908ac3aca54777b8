import type { DataSource } from 'typeorm';
import { monthlyLimitSql } from './metering';
import { lastPeriodos, periodoOf } from './period';
import { billingSettings, FREE_PLAN, type MonthlyLimit, type SiiEnv } from './settings';

export interface EnvironmentUse {
  usedThisMonth: number;
  /** null: unlimited */
  limit: MonthlyLimit;
}

export interface Payment {
  id: string;
  amount_clp: number;
  periodo: string;
  paid_on: string;
  reference: string | null;
  recorded_at: string;
}

/** GET /billing, the MCP tool consultar_plan and the dashboard page: one answer, one reader. */
export interface BillingView {
  plan: string;
  periodo: string;
  environments: Record<SiiEnv, EnvironmentUse>;
  /** the last months (oldest first, this month last): documents issued per environment */
  historial: { periodo: string; cert: number; prod: number }[];
  payments: Payment[];
}

/** Months of history in BillingView.historial (this one included). */
export const HISTORY_MONTHS = 6;

/** Payments shown (most recent first). */
export const PAYMENTS_SHOWN = 24;

/** The organization's plan, this month's use and allowance per environment, history, payments. */
export async function readBilling(
  db: Pick<DataSource, 'query'>,
  organizationId: string,
  now: Date,
): Promise<BillingView> {
  const periodo = periodoOf(now);
  const months = lastPeriodos(periodo, HISTORY_MONTHS);
  const defaults = billingSettings().defaultLimits;
  const [head]: { plan: string | null; cert_limit: number | null; prod_limit: number | null }[] =
    await db.query(
      `SELECT (SELECT plan FROM billing_plans WHERE organization_id = $1::uuid) AS plan,
            ${monthlyLimitSql({ organizationId: '$1', environment: "'cert'", defaultLimit: '$2' })} AS cert_limit,
            ${monthlyLimitSql({ organizationId: '$1', environment: "'prod'", defaultLimit: '$3' })} AS prod_limit`,
      [organizationId, defaults.cert, defaults.prod],
    );
  const usage: { sii_env: SiiEnv; periodo: string; used: number }[] = await db.query(
    `SELECT sii_env, periodo, used FROM billing_usage
      WHERE organization_id = $1::uuid AND periodo = ANY($2::text[])`,
    [organizationId, months],
  );
  const used = (env: SiiEnv, p: string) => usage.find((u) => u.sii_env === env && u.periodo === p)?.used ?? 0;
  const payments: (Omit<Payment, 'amount_clp' | 'recorded_at'> & {
    amount_clp: string;
    recorded_at: Date;
  })[] = await db.query(
    `SELECT id, amount_clp, periodo, to_char(paid_on, 'YYYY-MM-DD') AS paid_on, reference, recorded_at
         FROM billing_payments WHERE organization_id = $1::uuid
        ORDER BY paid_on DESC, recorded_at DESC LIMIT ${PAYMENTS_SHOWN}`,
    [organizationId],
  );
  return {
    plan: head!.plan ?? FREE_PLAN,
    periodo,
    environments: {
      cert: { usedThisMonth: used('cert', periodo), limit: head!.cert_limit },
      prod: { usedThisMonth: used('prod', periodo), limit: head!.prod_limit },
    },
    historial: months.map((p) => ({ periodo: p, cert: used('cert', p), prod: used('prod', p) })),
    payments: payments.map((p) => ({
      ...p,
      amount_clp: Number(p.amount_clp),
      recorded_at: p.recorded_at.toISOString(),
    })),
  };
}
