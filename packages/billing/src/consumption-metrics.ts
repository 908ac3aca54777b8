import type { DataSource } from 'typeorm';
import { periodoOf } from './period';
import { FREE_PLAN, type SiiEnv } from './settings';

/**
 * This month's documents per plan and environment, summed over organizations (the metric
 * dte_billing_documents_month: labels plan and sii_env only, never the organization).
 */
export async function consumptionByPlan(
  db: Pick<DataSource, 'query'>,
  now: Date,
): Promise<{ plan: string; sii_env: SiiEnv; used: number }[]> {
  const rows: { plan: string; sii_env: SiiEnv; used: string }[] = await db.query(
    `SELECT coalesce(p.plan, $2) AS plan, u.sii_env, sum(u.used) AS used
       FROM billing_usage u LEFT JOIN billing_plans p ON p.organization_id = u.organization_id
      WHERE u.periodo = $1
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [periodoOf(now), FREE_PLAN],
  );
  return rows.map((r) => ({ ...r, used: Number(r.used) }));
}
