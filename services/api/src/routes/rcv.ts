/**
 * The purchases and sales register (spec: GET /rcv, POST /rcv by period YYYY-MM; GET /rcof).
 *
 * - `POST /rcv {periodo}` enqueues a sync: the period row and the `rcv.sync` command (key
 *   company:env:period) are written in one transaction through the outbox (never straight to
 *   Kafka); services/rcv-sync performs it. `202 {periodo, estado: 'queued'}`.
 * - `GET /rcv?periodo=YYYY-MM` reads the last snapshot: sales and purchases with their SII state
 *   and the differences with what this service issued (`rcv.not_found` before the first sync,
 *   `rcv.sync.failed` when every attempt so far failed).
 * - `GET /rcof`: read-only list of consumption reports (never sent by this service: not mandatory
 *   since 1 August 2022).
 */
import { randomUUID } from 'node:crypto';
import { writeOutbox } from '@dte/database';
import { PIPELINE_SCHEMAS, PIPELINE_TOPICS, rcvSyncKey } from '@dte/messaging';
import { checkPeriodo } from '@dte/reception';
import type { ApiDeps, RouteDef } from '../context';
import { companyIdOf, rcvPeriodOf } from '../recepcion/eventos';
import { principalOf } from './route-kit';

export function rcvRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const db = deps.dataSource;
  return [
    {
      method: 'get',
      path: '/rcv',
      operationId: 'getRcv',
      summary:
        'The synchronized purchases and sales register of a period: SII state per document and differences',
      tag: 'rcv',
      auth: 'bearer',
      scope: 'rcv:read',
      query: {
        periodo: {
          description: 'YYYY-MM, not in the future',
          schema: { type: 'string', pattern: '^\\d{4}-\\d{2}$' },
        },
      },
      responses: { 200: { description: 'the period', schema: 'rcv-period.schema.json' } },
      errors: ['rcv.period.invalid', 'rcv.not_found', 'rcv.sync.failed'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const periodo = checkPeriodo(ctx.query.periodo, now());
        ctx.body = await rcvPeriodOf(deps, p, periodo);
      },
    },
    {
      method: 'post',
      path: '/rcv',
      operationId: 'syncRcv',
      summary: 'Synchronize a period of the register from the SII (queued; GET /rcv reads the result)',
      tag: 'rcv',
      auth: 'bearer',
      scope: 'rcv:read',
      body: { kind: 'json', schema: 'rcv-sync-request.schema.json' },
      responses: {
        202: { description: '{periodo, estado: queued}', schema: 'rcv-sync-accepted.schema.json' },
      },
      errors: ['rcv.period.invalid'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const t = now();
        const periodo = checkPeriodo((ctx.state.body as { periodo?: unknown } | undefined)?.periodo, t);
        const companyId = await companyIdOf(deps, p);
        const eventId = randomUUID();
        await db.transaction(async (m) => {
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
        ctx.status = 202;
        ctx.body = { periodo, estado: 'queued', solicitud_id: eventId };
      },
    },
    {
      method: 'get',
      path: '/rcof',
      operationId: 'listRcof',
      summary:
        'Read-only list of folio consumption reports (RCOF); this service never sends them (not mandatory since 2022-08-01)',
      tag: 'rcv',
      auth: 'bearer',
      scope: 'rcv:read',
      responses: { 200: { description: '{data}', schema: 'rcof-list.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const rows = await db.query(
          `SELECT r.id, c.rut AS rut_emisor, to_char(r.fecha, 'YYYY-MM-DD') AS fecha, r.secuencia, r.resumen, r.track_id, r.created_at
             FROM rcof_reports r JOIN companies c ON c.id = r.company_id
            WHERE r.organization_id = $1 AND r.sii_env = $2 AND ($3::uuid IS NULL OR r.company_id = $3)
            ORDER BY r.fecha DESC, r.secuencia DESC LIMIT 500`,
          [p.organizationId, p.environment, p.companyId],
        );
        ctx.body = { data: rows };
      },
    },
  ];
}
