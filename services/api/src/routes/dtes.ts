import { xmlMediaType } from '@dte/engine';
import type { Context } from 'koa';
import type { ApiDeps, Principal, RouteDef } from '../context';
import {
  type DteScope,
  backlogGateFor,
  DOCUMENT_RULE_CODES,
  emitDte,
  COMPANY_WITH_CERTIFICATES_PRELOAD,
  exchangeRateSourceFor,
  listDtes,
  LIST_SORTS,
  parseListQuery,
  RECEPTOR_ESTADOS,
  detailRecord,
  emissionResponse,
  dteEvents,
  getDteOr404,
  signedXml,
  refreshStatus,
} from '@dte/emission';
import { parsePreferWait, waitForSii, WaitSlots } from '../dtes/prefer-wait';
import { StatusWakeups } from '../dtes/status-wakeups';
import { principalOf } from './route-kit';

const scopeOf = (p: Principal): DteScope => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

const idOf = (ctx: Context) => String(ctx.params.id);

const POST_HEADERS = {
  'Idempotency-Key': 'required: the same key and body return the same document',
  'X-Cert-Id': 'certificate to sign with (Authentication 4)',
};

/** The /dtes routes (issue 6): emission, reads, list and refresh-status. */
export function dteRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const db = deps.dataSource;
  // Prefer: wait places of this api process (per caller and in all)
  const waitSlots = new WaitSlots();
  const wakeups = new StatusWakeups(db);
  // the exchange-rate source of exports lives beside the SII endpoints (the simulator serves it)
  const rates = exchangeRateSourceFor(deps.config);
  const backlog = backlogGateFor(deps);
  return [
    {
      method: 'post',
      path: '/dtes',
      operationId: 'emitDte',
      summary:
        'Issue a DTE (33, 34, 46, 52, 56, 61, 110, 112): folio assigned and queued for signing and sending',
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:write',
      // the company and its certificates come with the API key: POST /dtes is 2 statements
      preload: COMPANY_WITH_CERTIFICATES_PRELOAD,
      // the engine validates against the per-type branch (dte-emission-request), after its own codes
      body: { kind: 'json', schema: 'dte-emission-request.schema.json', validatedBy: 'handler' },
      headers: {
        ...POST_HEADERS,
        Prefer:
          'wait=N (seconds, at most 60): answer 201 if the document reaches the SII (track id) within N seconds',
      },
      responses: {
        201: {
          description: 'issued and sent to the SII within the Prefer: wait (no verdict yet)',
          schema: 'dte-emission-response.schema.json',
        },
        202: {
          description: 'issued and queued (the emission response)',
          schema: 'dte-emission-response.schema.json',
        },
      },
      errors: [
        'idempotency_key_missing',
        'idempotency_conflict',
        ...DOCUMENT_RULE_CODES,
        'onboarding_production_not_authorized',
        'dte.type.prod_not_certified',
        'dte.46.prod_not_certified',
        'dte.production_resolucion_missing',
        // notes over our own documents and guías (@dte/emission note-rules.ts)
        'dte.nota_credito.fuera_plazo',
        'dte.nota_credito.cedida_override_required',
        'dte.nota_credito.plazo_anulacion_override_required',
        'nota_previa_override_required',
        'dte.reference.cross_env',
        'guia.tipo_invalido',
        'guia.ya_facturada',
        'cert_id_missing',
        'cert_id_ambiguous',
        'cert_not_found',
        'cert_expired',
        'caf_not_found',
        'caf_expired',
        'caf_exhausted',
        'sii_unavailable',
      ],
      handler: async (ctx) => {
        const wait = parsePreferWait(ctx.get('Prefer') || undefined);
        const { row } = await emitDte(
          db,
          principalOf(ctx),
          {
            body: ctx.state.body,
            idempotencyKey: ctx.get('Idempotency-Key') || undefined,
            certIdHeader: ctx.get('X-Cert-Id') || undefined,
            requestId: ctx.state.requestId as string | undefined,
          },
          now(),
          { rates, backlog },
        );
        let current = row;
        let sent = false;
        const release = wait !== undefined ? waitSlots.take(principalOf(ctx).actorId) : null;
        if (wait !== undefined && release) {
          try {
            ({ row: current, sent } = await waitForSii(db, row, wait, 200, wakeups));
          } finally {
            release();
          }
          ctx.set('Preference-Applied', `wait=${wait}`);
        }
        const response = emissionResponse(current);
        ctx.status = sent ? 201 : 202;
        ctx.set('Location', response.links.self);
        ctx.body = response;
      },
    },
    {
      method: 'get',
      path: '/dtes',
      operationId: 'listDtes',
      summary: 'List documents: filters, sort, dir and an opaque keyset cursor ({data, next_cursor})',
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      query: {
        limit: { description: '1-100, default 20 (clamped)', schema: { type: 'integer' } },
        sort: { description: 'default created_at', schema: { type: 'string', enum: [...LIST_SORTS] } },
        dir: { description: 'default desc', schema: { type: 'string', enum: ['asc', 'desc'] } },
        cursor: {
          description: 'next_cursor of the previous page, with the same sort and dir',
          schema: { type: 'string' },
        },
        polled_since: {
          description: 'ISO-8601 instant: last SII poll at or after',
          schema: { type: 'string' },
        },
        tipo_dte: { description: 'numeric type code', schema: { type: 'integer' } },
        folio: { description: 'integer of up to 10 digits', schema: { type: 'integer' } },
        rut_receptor: { description: 'RUT 12345678-9', schema: { type: 'string' } },
        fecha_emision_desde: { description: 'YYYY-MM-DD', schema: { type: 'string', format: 'date' } },
        fecha_emision_hasta: { description: 'YYYY-MM-DD', schema: { type: 'string', format: 'date' } },
        receptor_estado: {
          description: 'receptor state',
          schema: { type: 'string', enum: [...RECEPTOR_ESTADOS] },
        },
        sii_status: { description: 'a member of the sii_status vocabulary', schema: { type: 'string' } },
      },
      responses: { 200: { description: '{data: [row], next_cursor}', schema: 'dte-list.schema.json' } },
      errors: [
        'dte.list.cursor_invalido',
        'dte.list.status_desconocido',
        'dte.list.tipo_invalido',
        'dte.list.folio_invalido',
        'dte.list.rut_receptor_invalido',
        'dte.list.fecha_invalida',
        'dte.list.polled_since_invalido',
        'dte.list.receptor_estado_invalido',
      ],
      handler: async (ctx) => {
        const q = parseListQuery(ctx.query);
        ctx.body = await listDtes(db, scopeOf(principalOf(ctx)), q);
      },
    },
    {
      method: 'get',
      path: '/dtes/:id',
      operationId: 'getDte',
      summary: 'Detail of a document with its EstadoDte block',
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: 'the document', schema: 'dte-detail.schema.json' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        ctx.body = detailRecord(await getDteOr404(db, scopeOf(principalOf(ctx)), idOf(ctx)));
      },
    },
    {
      method: 'get',
      path: '/dtes/:id/events',
      operationId: 'getDteEvents',
      summary: "Chronological feed of the document's status changes with the SII's gloss",
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: 'the feed, oldest first', schema: 'dte-events.schema.json' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        ctx.body = await dteEvents(db, scopeOf(principalOf(ctx)), idOf(ctx));
      },
    },
    {
      method: 'get',
      path: '/dtes/:id/xml',
      operationId: 'getDteXml',
      summary: 'The signed document (application/xml)',
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: 'signed DTE XML', contentType: 'application/xml' } },
      errors: ['not_found', 'dte.xml.not_yet_available'],
      handler: async (ctx) => {
        const xml = await signedXml(db, scopeOf(principalOf(ctx)), idOf(ctx));
        ctx.type = xmlMediaType(xml);
        ctx.body = xml;
      },
    },
    {
      method: 'post',
      path: '/dtes/:id/refresh-status',
      operationId: 'refreshDteStatus',
      summary: 'Re-poll the SII for a stuck or sin_permiso_sii document',
      tag: 'dtes',
      auth: 'bearer_or_session',
      scope: 'dte:write',
      headers: { 'X-Cert-Id': 'accepted as on every /dtes POST; the re-poll uses the active certificate' },
      responses: {
        202: { description: '{id, status: refresh_enqueued}', schema: 'dte-refresh-status.schema.json' },
        200: { description: 'nothing to do', schema: 'dte-refresh-status.schema.json' },
      },
      errors: ['not_found', 'dte.refresh_status.no_track_id', 'dte.refresh_status.no_cert'],
      handler: async (ctx) => {
        const out = await refreshStatus(db, scopeOf(principalOf(ctx)), idOf(ctx), now());
        ctx.status = out.status;
        ctx.body = out.body;
      },
    },
  ];
}
