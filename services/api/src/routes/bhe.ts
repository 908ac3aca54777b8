import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { annulBhe, getBhe, issueBhe, listBhe, type BheBody, type BheDeps } from '@dte/bhe';
import type { ApiDeps, Principal, RouteDef } from '../context';
import { flagged } from './boletas';
import { principalOf } from './route-kit';

const scopeOf = (p: Principal) => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

/** /bhe (issue 16): mounted only when BHE_ENABLED names an environment. */
export function bheRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const flag = deps.config.bheEnabled;
  if (flag.size === 0) return [];
  const sii = new SiiClient({
    ...(deps.config.siiBaseUrl ? { endpoints: simulatorEndpoints(deps.config.siiBaseUrl) } : {}),
    timeoutMs: deps.config.siiTimeoutMs,
  });
  const d: BheDeps = { db: deps.dataSource, keys: deps.keys, sii };
  const tag = 'bhe';
  return [
    {
      method: 'post',
      path: '/bhe',
      operationId: 'issueBhe',
      summary: 'Issue a boleta de honorarios with the retention of its year (Ley 21.133 schedule)',
      tag,
      auth: 'bearer',
      scope: 'dte:write',
      body: { kind: 'json', schema: 'bhe-emission.schema.json' },
      headers: {
        'Idempotency-Key': 'required: the same key and body return the same BHE',
        'X-Cert-Id': 'certificate that authenticates at the SII',
      },
      responses: {
        202: { description: 'issued at the SII (the BHE record)', schema: 'created-id.schema.json' },
      },
      errors: [
        'idempotency_key_missing',
        'idempotency_conflict',
        'emisor_rut_mismatch',
        'bhe.retencion.mismatch',
        'bhe.receptor.tipo_invalid',
        'bhe.credential.invalid',
        'bhe.rest.unavailable',
        'bhe.rest.pipeline_error',
        'cert_id_missing',
        'cert_id_ambiguous',
        'cert_not_found',
      ],
      handler: flagged(flag, async (ctx) => {
        const rec = await issueBhe(
          d,
          principalOf(ctx),
          {
            body: ctx.state.body as BheBody,
            idempotencyKey: ctx.get('Idempotency-Key') || undefined,
            certIdHeader: ctx.get('X-Cert-Id') || undefined,
          },
          now(),
        );
        ctx.status = 202;
        ctx.set('Location', rec.links.self);
        ctx.body = rec;
      }),
    },
    {
      method: 'get',
      path: '/bhe',
      operationId: 'listBhe',
      summary: 'List BHE, newest first ({bhes, next_cursor}); filters periodo, estado, anulada',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      query: {
        limit: { description: '1-100, default 20 (clamped)', schema: { type: 'integer' } },
        periodo: { description: 'YYYY-MM of the issue date', schema: { type: 'string' } },
        estado: {
          description: 'vigente, anulacion_solicitada (waiting for the receiver) or anulada',
          schema: { type: 'string', enum: ['vigente', 'anulacion_solicitada', 'anulada'] },
        },
        anulada: {
          description: 'true or false (a pending annulment request is not annulled)',
          schema: { type: 'boolean' },
        },
      },
      responses: { 200: { description: '{bhes: [record], next_cursor: null}' } },
      errors: ['validation_failed'],
      handler: flagged(flag, async (ctx) => {
        ctx.body = await listBhe(deps.dataSource, scopeOf(principalOf(ctx)), ctx.query);
      }),
    },
    {
      method: 'get',
      path: '/bhe/:id',
      operationId: 'getBhe',
      summary: 'Detail of a BHE (a pending annulment request is asked at the SII again)',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      responses: { 200: { description: 'the BHE record' } },
      errors: ['bhe.not_found'],
      handler: flagged(flag, async (ctx) => {
        ctx.body = await getBhe(d, scopeOf(principalOf(ctx)), String(ctx.params.id), now());
      }),
    },
    {
      method: 'post',
      path: '/bhe/:id/anular',
      operationId: 'annulBhe',
      summary:
        'Annul a BHE: at once until day 10 of the next month, then a request the receiver confirms, until 1 March of the next year',
      tag,
      auth: 'bearer',
      scope: 'dte:write',
      body: { kind: 'json', schema: 'bhe-anular.schema.json' },
      headers: { 'X-Cert-Id': 'certificate that authenticates at the SII' },
      responses: { 200: { description: 'the BHE, anulada or anulacion_solicitada' } },
      errors: [
        'bhe.not_found',
        'bhe.plazo_anulacion.expired',
        'bhe.credential.invalid',
        'bhe.rest.unavailable',
        'bhe.rest.pipeline_error',
      ],
      handler: flagged(flag, async (ctx) => {
        const body = (ctx.state.body ?? {}) as { motivo?: string };
        ctx.body = await annulBhe(
          d,
          principalOf(ctx),
          String(ctx.params.id),
          body.motivo,
          ctx.get('X-Cert-Id') || undefined,
          now(),
        );
      }),
    },
  ];
}
