import { backlogGateFor, COMPANY_WITH_CERTIFICATES_PRELOAD } from '@dte/emission';
import { type BoletaInput, xmlMediaType } from '@dte/engine';
import type { Context } from 'koa';
import {
  batchStatus,
  submitBatch,
  emitBoleta,
  type FeatureFlag,
  boletaPdf,
  boletaXml,
  getBoletaDetail,
  listBoletas,
  boletaResponse,
} from '@dte/boletas';
import type { PrintLayout } from '@dte/printed-form';
import type { ApiDeps, Principal, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { principalOf } from './route-kit';

const scopeOf = (p: Principal) => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

/**
 * Behind a flag, a route answers exactly what an unmounted path answers (the spec: "respond 404
 * at present"): the error envelope's `not_found` for the environments the flag leaves out.
 */
export function flagged(
  flag: FeatureFlag,
  handler: (ctx: Context) => Promise<void>,
): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    if (!flag.has(principalOf(ctx).environment))
      throw new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`);
    await handler(ctx);
  };
}

const POST_HEADERS = {
  'Idempotency-Key': 'required: the same key and body return the same boleta',
  'X-Cert-Id': 'certificate to sign with (Authentication 4)',
};

/** /boletas (issue 16): mounted only when BOLETAS_ENABLED names an environment. */
export function boletaRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const flag = deps.config.boletasEnabled;
  if (flag.size === 0) return [];
  const db = deps.dataSource;
  const backlog = backlogGateFor(deps);
  const tag = 'boletas';
  return [
    {
      method: 'post',
      path: '/boletas',
      operationId: 'emitBoleta',
      summary:
        'Issue a boleta 39/41 (gross amounts; totals derived): folio assigned, queued for the boleta REST channel',
      tag,
      auth: 'bearer',
      scope: 'dte:write',
      // the company and its signers' certificates come with the API key
      preload: COMPANY_WITH_CERTIFICATES_PRELOAD,
      body: { kind: 'json', schema: 'boleta-emission.schema.json' },
      headers: POST_HEADERS,
      responses: { 202: { description: 'issued and queued', schema: 'created-id.schema.json' } },
      errors: [
        'idempotency_key_missing',
        'idempotency_conflict',
        'dte.sii_env_credential_mismatch',
        'emisor_rut_mismatch',
        'dte.41.afecto_not_allowed',
        'amount_arithmetic',
        'dte.field_not_latin1',
        'dte.field_too_long',
        'boleta.tipo_no_habilitado',
        'onboarding_production_not_authorized',
        'dte.production_resolucion_missing',
        'cert_id_missing',
        'cert_id_ambiguous',
        'cert_not_found',
        'cert_expired',
        'caf_not_found',
        'caf_expired',
        'caf_exhausted',
        'sii_unavailable',
      ],
      handler: flagged(flag, async (ctx) => {
        const row = await emitBoleta(
          db,
          principalOf(ctx),
          {
            body: ctx.state.body as BoletaInput,
            idempotencyKey: ctx.get('Idempotency-Key') || undefined,
            certIdHeader: ctx.get('X-Cert-Id') || undefined,
            requestId: ctx.state.requestId as string | undefined,
          },
          now(),
          { backlog },
        );
        const body = boletaResponse(row);
        ctx.status = 202;
        ctx.set('Location', body.links.self);
        ctx.body = body;
      }),
    },
    {
      method: 'get',
      path: '/boletas',
      operationId: 'listBoletas',
      summary: 'List boletas, newest first ({boletas, next_cursor}; limit only)',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      query: { limit: { description: '1-100, default 20 (clamped)', schema: { type: 'integer' } } },
      responses: { 200: { description: '{boletas: [row], next_cursor: null}' } },
      errors: [],
      handler: flagged(flag, async (ctx) => {
        ctx.body = await listBoletas(db, scopeOf(principalOf(ctx)), ctx.query.limit);
      }),
    },
    {
      method: 'post',
      path: '/boletas/batch',
      operationId: 'submitBoletaBatch',
      summary: 'Issue 1-1000 boletas at once (idempotency in the body; dedup by batch and position)',
      tag,
      auth: 'bearer',
      scope: 'dte:write',
      // the company and its signers' certificates come with the API key
      preload: COMPANY_WITH_CERTIFICATES_PRELOAD,
      body: { kind: 'json', schema: 'boleta-batch.schema.json' },
      headers: { 'X-Cert-Id': 'certificate to sign with (Authentication 4)' },
      responses: { 202: { description: '{batchId, queued}', schema: 'boleta-batch-accepted.schema.json' } },
      errors: [
        'validation_error',
        'boleta.batch.exceeds_max',
        'boleta.batch.idempotency_conflict',
        'dte.production_resolucion_missing',
        'cert_id_missing',
        'cert_id_ambiguous',
        'cert_not_found',
        'caf_not_found',
        'caf_expired',
        'caf_exhausted',
        'sii_unavailable',
      ],
      handler: flagged(flag, async (ctx) => {
        ctx.status = 202;
        ctx.body = await submitBatch(
          db,
          principalOf(ctx),
          ctx.state.body,
          ctx.get('X-Cert-Id') || undefined,
          now(),
          { backlog, requestId: ctx.state.requestId as string | undefined },
        );
      }),
    },
    {
      method: 'get',
      path: '/boletas/batch/:id',
      operationId: 'getBoletaBatch',
      summary: 'Progress of a batch: status, total, queued, sending, done, failed, createdAt, completedAt',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      responses: { 200: { description: 'the batch status' } },
      errors: ['boleta.batch.not_found'],
      handler: flagged(flag, async (ctx) => {
        ctx.body = await batchStatus(db, scopeOf(principalOf(ctx)), String(ctx.params.id));
      }),
    },
    {
      method: 'get',
      path: '/boletas/:id',
      operationId: 'getBoleta',
      summary: 'Detail of a boleta',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      responses: { 200: { description: 'the boleta' } },
      errors: ['not_found'],
      handler: flagged(flag, async (ctx) => {
        ctx.body = await getBoletaDetail(db, scopeOf(principalOf(ctx)), String(ctx.params.id));
      }),
    },
    {
      method: 'get',
      path: '/boletas/:id/xml',
      operationId: 'getBoletaXml',
      summary: 'The signed boleta (application/xml; the charset parameter names its bytes)',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      responses: { 200: { description: 'signed boleta XML', contentType: 'application/xml' } },
      errors: ['not_found', 'boleta.xml.not_yet_available'],
      handler: flagged(flag, async (ctx) => {
        const xml = await boletaXml(db, scopeOf(principalOf(ctx)), String(ctx.params.id));
        ctx.type = xmlMediaType(xml);
        ctx.body = xml;
      }),
    },
    {
      method: 'get',
      path: '/boletas/:id/pdf',
      operationId: 'getBoletaPdf',
      summary:
        'The printed boleta (80 mm thermal ticket or letter) with the PDF417 timbre, from the signed XML',
      tag,
      auth: 'bearer',
      scope: 'dte:read',
      query: {
        layout: {
          description: 'thermal (default: the 80 mm roll of a point of sale) or letter',
          schema: { type: 'string', enum: ['thermal', 'letter'] },
        },
      },
      responses: { 200: { description: 'application/pdf' } },
      errors: [
        'validation_failed',
        'not_found',
        'boleta.xml.not_yet_available',
        'dte.print.items_limit',
        'dte.print.overflow',
      ],
      handler: flagged(flag, async (ctx) => {
        const layout = ctx.query.layout === undefined ? 'thermal' : String(ctx.query.layout);
        if (layout !== 'thermal' && layout !== 'letter')
          throw new ApiError('validation_failed', 'Invalid print query.', {
            issues: [{ path: 'layout', message: 'must be thermal or letter' }],
          });
        const { pdf, cached, filename } = await boletaPdf(
          db,
          deps.redis,
          scopeOf(principalOf(ctx)),
          String(ctx.params.id),
          layout as PrintLayout,
        );
        ctx.type = 'application/pdf';
        ctx.set('Content-Disposition', `inline; filename="${filename}"`);
        ctx.set('X-Cache', cached ? 'hit' : 'miss');
        ctx.body = pdf;
      }),
    },
  ];
}
