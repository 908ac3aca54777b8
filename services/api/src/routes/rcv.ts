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
import { checkPeriodo, rcvPeriodOf, requestRcvSync } from '@dte/reception';
import type { ApiDeps, RouteDef } from '../context';
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
        ctx.body = await requestRcvSync(deps, p, periodo, t);
        ctx.status = 202;
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
