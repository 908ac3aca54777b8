import type { Context } from 'koa';
import type { ApiDeps, Principal, RouteDef } from '../context';
import {
  type DteScope,
  HttpExchangeRateSource,
  UnconfiguredExchangeRateSource,
  DOCUMENT_RULE_CODES,
  dtePdf,
  muestrasZip,
  MUESTRAS_MAX_DOCUMENTOS,
  parseMuestrasSource,
  parsePrintQuery,
  PREVIEW_TIPOS,
  previewDte,
  sendMuestras,
} from '@dte/emission';
import { principalOf } from './route-kit';

const scopeOf = (p: Principal): DteScope => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

const PRINT_QUERY = {
  copy: {
    description:
      'original (default) or cedible (types 33, 34, 43, 46 and 52: the CEDIBLE copy with the acuse de recibo)',
    schema: { type: 'string', enum: ['original', 'cedible'] },
  },
  layout: {
    description: 'letter (default) or thermal (80 mm roll)',
    schema: { type: 'string', enum: ['letter', 'thermal'] },
  },
};

/**
 * The printed form (issue 11): GET /dtes/:id/pdf, POST /dtes/preview, GET /dtes/muestras and
 * POST /dtes/muestras/send. Registered before the /dtes routes so `/dtes/:id` cannot shadow the
 * literal paths.
 */
export function dtePrintRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const db = deps.dataSource;
  const rateUrl = deps.config.exchangeRateUrl ?? deps.config.siiBaseUrl;
  const rates = rateUrl
    ? new HttpExchangeRateSource(rateUrl, deps.config.siiTimeoutMs)
    : new UnconfiguredExchangeRateSource();
  return [
    {
      method: 'get',
      path: '/dtes/muestras',
      operationId: 'getDteMuestras',
      summary: 'ZIP with one PDF per signed certification 33/34/56/61 (the SII sample prints)',
      tag: 'dtes',
      auth: 'bearer',
      scope: 'dte:read',
      query: {
        source: {
          description:
            'set_pruebas: only the documents of the SII test set (a reference TpoDocRef SET or RazonRef "CASO <n>-<m>")',
          schema: { type: 'string', enum: ['set_pruebas'] },
        },
      },
      responses: {
        200: {
          description:
            'application/zip, one <tipo>-<folio>.pdf per document (at most 60, by type and folio; X-Muestras-Total gives the count when there are more); X-Muestras-Omitted names documents the printed form refuses (e.g. 33-7.pdf:dte.print.items_limit)',
        },
      },
      errors: ['validation_failed', 'dte.muestras.empty', 'rate_limit'],
      handler: async (ctx) => {
        const { zip, omitted, total } = await muestrasZip(
          db,
          deps.redis,
          principalOf(ctx),
          parseMuestrasSource(ctx.query),
        );
        ctx.type = 'application/zip';
        // documents the printed form refuses (more than 40 items, overflow) are named, not zipped
        if (omitted.length)
          ctx.set('X-Muestras-Omitted', omitted.map((o) => `${o.name}:${o.code}`).join(', '));
        // more than MUESTRAS_MAX_DOCUMENTOS: the ZIP holds the first ones (by type and folio)
        if (total > MUESTRAS_MAX_DOCUMENTOS) ctx.set('X-Muestras-Total', String(total));
        ctx.set('Content-Disposition', 'attachment; filename="muestras.zip"');
        ctx.body = zip;
      },
    },
    {
      method: 'post',
      path: '/dtes/muestras/send',
      operationId: 'sendDteMuestras',
      summary: "Mail the sample prints to the SII's sample mailbox (SMTP, one mail of at most 3 MB)",
      tag: 'dtes',
      auth: 'bearer',
      scope: 'dte:write',
      query: {
        source: {
          description: 'set_pruebas: only the documents of the SII test set (as in GET /dtes/muestras)',
          schema: { type: 'string', enum: ['set_pruebas'] },
        },
      },
      responses: { 200: { description: '{data: {sent, sentAt}}', schema: 'dte-muestras-send.schema.json' } },
      errors: [
        'validation_failed',
        'dte.muestras.no_samples',
        'dte.muestras.too_large',
        'dte.muestras.send_not_configured',
        'dte.muestras.not_sent',
        'rate_limit',
      ],
      handler: async (ctx) => {
        const out = await sendMuestras(
          db,
          deps.redis,
          deps.config,
          principalOf(ctx),
          parseMuestrasSource(ctx.query),
          now,
        );
        ctx.body = { data: out };
      },
    },
    {
      method: 'post',
      path: '/dtes/preview',
      operationId: 'previewDte',
      summary:
        'Draft of a 33, 34, 46, 52, 56 or 61: the emission validation and totals, a PDF marked BORRADOR (no folio, nothing stored)',
      tag: 'dtes',
      auth: 'bearer',
      scope: 'dte:write',
      body: {
        kind: 'json',
        schema: 'dte-emission-request.schema.json',
        validatedBy: 'handler',
        // the emission examples of the types preview takes (not the export invoice 110)
        examples: (v) => PREVIEW_TIPOS.includes((v as { tipo_dte?: number }).tipo_dte ?? -1),
      },
      headers: {
        Accept: 'application/pdf (default): the draft PDF; application/json: the totals only',
      },
      query: { layout: PRINT_QUERY.layout },
      responses: {
        200: {
          description:
            'application/pdf: the draft (BORRADOR — SIN VALIDEZ TRIBUTARIA); with Accept: application/json, the totals as below',
          schema: 'dte-preview.schema.json',
        },
      },
      errors: [
        'dte.preview.unsupported_tipo',
        ...DOCUMENT_RULE_CODES,
        'dte.print.items_limit',
        'dte.print.overflow',
      ],
      handler: async (ctx) => {
        const wantJson = ctx.accepts('application/pdf', 'application/json') === 'application/json';
        const { layout } = parsePrintQuery({ layout: ctx.query.layout });
        const out = await previewDte(db, principalOf(ctx), ctx.state.body, now(), {
          rates,
          layout,
          wantPdf: !wantJson,
        });
        if (wantJson) {
          ctx.body = { data: out.totals };
          return;
        }
        ctx.type = 'application/pdf';
        ctx.set('X-Dte-Monto-Total', String(out.totals.monto_total));
        ctx.body = out.pdf;
      },
    },
    {
      method: 'get',
      path: '/dtes/:id/pdf',
      operationId: 'getDtePdf',
      summary: 'The printed form (representación impresa) with the PDF417 timbre, from the signed XML',
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      query: PRINT_QUERY,
      responses: { 200: { description: 'application/pdf' } },
      errors: [
        'validation_failed',
        'not_found',
        'dte.pdf.not_signed',
        'dte.print.items_limit',
        'dte.print.overflow',
      ],
      handler: async (ctx: Context) => {
        const q = parsePrintQuery(ctx.query);
        const { pdf, cached, filename } = await dtePdf(
          db,
          deps.redis,
          scopeOf(principalOf(ctx)),
          String(ctx.params.id),
          q,
        );
        ctx.type = 'application/pdf';
        ctx.set('Content-Disposition', `inline; filename="${filename}"`);
        ctx.set('X-Cache', cached ? 'hit' : 'miss');
        ctx.body = pdf;
      },
    },
  ];
}
