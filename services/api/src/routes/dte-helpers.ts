import type { ApiDeps, Principal, RouteDef } from '../context';
import {
  backlogGateFor,
  deriveDte,
  type DeriveBody,
  HttpExchangeRateSource,
  UnconfiguredExchangeRateSource,
  emissionResponse,
  dteTotales,
  parsePeriodo,
} from '@dte/emission';
import { principalOf } from './route-kit';

const scopeOf = (p: Principal) => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

/**
 * The document helpers of issue 11 (items 3 and 5): derive and totales. Registered before
 * dteRoutes so that /dtes/:id does not take /dtes/totales.
 */
export function dteHelperRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const db = deps.dataSource;
  const rateUrl = deps.config.exchangeRateUrl ?? deps.config.siiBaseUrl;
  const backlog = backlogGateFor(deps);
  const rates = rateUrl
    ? new HttpExchangeRateSource(rateUrl, deps.config.siiTimeoutMs)
    : new UnconfiguredExchangeRateSource();
  return [
    {
      method: 'get',
      path: '/dtes/totales',
      operationId: 'getDteTotales',
      summary:
        "The month's counts and amounts per tipo_dte and per sii_status (by fecha_emision), in the key's environment",
      tag: 'dtes',
      auth: 'bearer',
      scope: 'dte:read',
      query: {
        periodo: {
          description: 'YYYY-MM; default the current month in America/Santiago',
          schema: { type: 'string', pattern: '^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])$' },
        },
      },
      responses: { 200: { description: 'the totals', schema: 'dte-totales.schema.json' } },
      errors: ['dte.totales.query_invalid'],
      handler: async (ctx) => {
        const periodo = parsePeriodo(ctx.query.periodo, now());
        ctx.body = await dteTotales(db, scopeOf(principalOf(ctx)), periodo);
      },
    },
    {
      method: 'post',
      path: '/dtes/:id/derive',
      operationId: 'deriveDte',
      summary:
        'Issue a document derived from this one (copy, anular, corregir-nc, corregir-nd, corregir-texto) through the emission path',
      tag: 'dtes',
      auth: 'bearer',
      scope: 'dte:write',
      body: { kind: 'json', schema: 'dte-derive-body.schema.json' },
      headers: {
        'Idempotency-Key': 'required: the same key and body return the same derived document',
        'X-Cert-Id': 'certificate to sign with (Authentication 4)',
      },
      responses: {
        202: {
          description: 'the new document, issued and queued',
          schema: 'dte-derive-response.schema.json',
        },
      },
      errors: [
        'invalid_action',
        'document.not_found',
        'document.not_templatable',
        'idempotency_key_missing',
        'idempotency_conflict',
        'fuera_plazo',
        'cedida_override_required',
        'plazo_anulacion_override_required',
        'nota_previa_override_required',
        'dte.reference.cross_env',
        'guia.ya_facturada',
        'dte.nota_credito.reference_tipo_unsupported',
        'dte.nota_credito.invalid_reason',
        'dte.nota_debito.invalid_reason',
        'text_correction_must_be_zero',
        'cert_id_missing',
        'cert_id_ambiguous',
        'caf_not_found',
        'caf_expired',
        'caf_exhausted',
        'sii_unavailable',
      ],
      handler: async (ctx) => {
        const req = ctx.state.body as DeriveBody;
        const { row } = await deriveDte(
          db,
          principalOf(ctx),
          String(ctx.params.id),
          {
            body: req,
            idempotencyKey: ctx.get('Idempotency-Key') || undefined,
            certIdHeader: ctx.get('X-Cert-Id') || undefined,
          },
          now(),
          { rates, backlog },
        );
        const out = emissionResponse(row);
        ctx.status = 202;
        ctx.set('Location', out.links.self);
        ctx.body = { ...out, derived_from: String(ctx.params.id), action: req.action };
      },
    },
  ];
}
