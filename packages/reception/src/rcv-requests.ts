/**
 * The RCV's service functions, shared by the api's REST routes (routes/rcv.ts) and the MCP tools
 * (@dte/agents recepcion-tools.ts): the last snapshot of a period, and a sync request through the
 * outbox (services/rcv-sync performs it).
 */
import { randomUUID } from 'node:crypto';
import { writeOutbox } from '@dte/database';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS, rcvSyncKey } from '@dte/messaging';
import { readRcvPeriod } from './rcv-read';
import type { Principal } from '@dte/tenancy';
import type { ReceptionDeps } from './deps';
import { ApiError } from '@dte/error-catalog';

/** The credential's company (its own, or the organization's only one). */
export async function companyIdOf(deps: ReceptionDeps, p: Principal): Promise<string> {
  if (p.companyId) return p.companyId;
  const rows: { id: string }[] = await deps.dataSource.query(
    `SELECT id FROM companies WHERE organization_id = $1 ORDER BY created_at LIMIT 2`,
    [p.organizationId],
  );
  if (rows.length !== 1) throw new ApiError('empresa.not_found', 'The credential names no single company.');
  return rows[0]!.id;
}

/** GET /rcv: the last snapshot of a period already checked (checkPeriodo). */
export async function rcvPeriodOf(deps: ReceptionDeps, p: Principal, periodo: string) {
  return readRcvPeriod(deps.dataSource, {
    companyId: await companyIdOf(deps, p),
    env: p.environment,
    periodo,
  });
}

/**
 * POST /rcv: the period row and the `rcv.sync` command (key company:env:period) in one
 * transaction through the outbox, never straight to Kafka. `periodo` already checked.
 */
export async function requestRcvSync(deps: ReceptionDeps, p: Principal, periodo: string, t: Date) {
  const companyId = await companyIdOf(deps, p);
  const eventId = randomUUID();
  await deps.dataSource.transaction(async (m) => {
    // a new request re-arms a period left failed; a synced one keeps its snapshot until replaced
    await m.query(
      `INSERT INTO rcv_periods (company_id, sii_env, periodo, organization_id, status, requested_at)
       VALUES ($1, $2, $3, $4, 'pending', $5)
       ON CONFLICT (company_id, sii_env, periodo) DO UPDATE SET requested_at = $5,
         attempts = CASE WHEN rcv_periods.status = 'failed' THEN 0 ELSE rcv_periods.attempts END,
         status = CASE WHEN rcv_periods.status = 'failed' THEN 'retrying' ELSE rcv_periods.status END`,
      [companyId, p.environment, periodo, p.organizationId, t],
    );
    await writeOutbox(m, [
      {
        topic: PIPELINE_TOPICS.rcvSync,
        schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.rcvSync],
        key: rcvSyncKey(companyId, p.environment, periodo),
        payload: {
          event_id: eventId,
          organization_id: p.organizationId,
          company_id: companyId,
          sii_env: p.environment,
          periodo,
          requested_at: t.toISOString(),
        },
      },
    ]);
  });
  return { periodo, estado: 'queued' as const, solicitud_id: eventId };
}
