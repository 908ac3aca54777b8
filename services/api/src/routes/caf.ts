import type { ApiDeps, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { parseMultipart } from '../http/multipart';
import {
  cafInventory,
  cafRecord,
  deleteCaf,
  uploadCaf,
  requestCaf,
  setCafAuto,
  type CafAutoBody,
  type CafRequestBody,
} from '@dte/folios';
import { principalOf } from './route-kit';

const OWNER_ADMIN = ['owner', 'admin'] as const;

export function cafRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  return [
    {
      method: 'post',
      path: '/caf/request',
      operationId: 'requestCaf',
      summary: 'Request folios from the SII (an irreversible grant) and store the CAF',
      tag: 'caf',
      auth: 'bearer_or_session',
      scope: 'caf:write',
      roles: [...OWNER_ADMIN],
      body: { kind: 'json', schema: 'caf-request.schema.json' },
      headers: { 'X-Cert-Id': 'certificate to authenticate with; the active (default) one when absent' },
      responses: { 201: { description: 'granted CAF, stored', schema: 'caf.schema.json' } },
      errors: [
        'emisor_rut_mismatch',
        'org.rut_missing',
        'caf.type_not_prod_certified',
        'caf.request_in_flight',
        'cert.missing',
        'cert.not_found',
        'cert_expired',
        'cert.kms.auth_failed',
        'cert.kms_unavailable',
        'caf.request_failed',
        'caf.grant_rejected',
        'caf.cert_not_authorized',
        'caf.persist_failed',
      ],
      handler: async (ctx) => {
        const row = await requestCaf(
          deps,
          principalOf(ctx),
          ctx.state.body as CafRequestBody,
          ctx.get('X-Cert-Id') || undefined,
          now(),
        );
        ctx.status = 201;
        ctx.body = cafRecord(row, now());
      },
    },
    {
      method: 'put',
      path: '/caf/auto',
      operationId: 'setCafAuto',
      summary: 'Enable or disable automatic stamping of a document type (production only)',
      tag: 'caf',
      auth: 'bearer_or_session',
      scope: 'caf:write',
      roles: [...OWNER_ADMIN],
      body: { kind: 'json', schema: 'caf-auto.schema.json' },
      responses: { 200: { description: 'the setting', schema: 'caf-auto-setting.schema.json' } },
      errors: [
        'caf.auto_requires_production',
        'emisor_rut_mismatch',
        'org.rut_missing',
        'caf.type_not_prod_certified',
      ],
      handler: async (ctx) => {
        ctx.body = await setCafAuto(deps, principalOf(ctx), ctx.state.body as CafAutoBody);
      },
    },
    {
      method: 'post',
      path: '/caf',
      operationId: 'uploadCaf',
      summary: 'Upload a CAF XML (multipart: file, optional tipo_esperado)',
      tag: 'caf',
      auth: 'bearer_or_session',
      scope: 'caf:write',
      roles: [...OWNER_ADMIN],
      body: { kind: 'multipart', schema: 'caf-upload.schema.json' },
      responses: { 201: { description: 'CAF stored', schema: 'caf.schema.json' } },
      errors: [
        'caf.invalid_request',
        'caf.parse_error',
        'caf.wrong_tipo',
        'caf_expired',
        'caf.no_certificate',
        'caf.duplicate',
        'sii_env_mismatch',
        'emisor_rut_mismatch',
        'org.rut_missing',
        'caf.type_not_prod_certified',
        'caf.kms_unavailable',
        'caf.insert_failed',
      ],
      handler: async (ctx) => {
        const form = await parseMultipart(ctx, 'caf.invalid_request');
        const file = form.files.file;
        if (!file || file.data.length === 0) {
          throw new ApiError('caf.invalid_request', 'Missing file.', { detail: { missing: ['file'] } });
        }
        const raw = form.fields.tipo_esperado?.trim();
        if (raw !== undefined && raw !== '' && !/^[0-9]{1,3}$/.test(raw)) {
          throw new ApiError('caf.invalid_request', 'tipo_esperado must be a document type number.', {
            detail: { field: 'tipo_esperado' },
          });
        }
        const tipoEsperado = raw ? Number(raw) : undefined;
        const row = await uploadCaf(
          deps.dataSource,
          deps.keys,
          principalOf(ctx),
          { xml: file.data, tipoEsperado },
          now(),
          deps.config.siiCafKeys,
        );
        ctx.status = 201;
        ctx.body = cafRecord(row, now());
      },
    },
    {
      method: 'get',
      path: '/caf',
      operationId: 'listCaf',
      summary: 'CAF inventory of the environment: remaining folios and the low_folios alert',
      tag: 'caf',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      query: {
        sii_env: {
          description: 'session only: environment to show (default cert); an API key uses its own',
          schema: { type: 'string', enum: ['cert', 'prod'] },
        },
      },
      responses: { 200: { description: 'inventory', schema: 'caf-inventory.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = await cafInventory(
          deps.dataSource,
          principalOf(ctx),
          deps.config.lowFoliosThreshold,
          now(),
        );
      },
    },
    {
      method: 'delete',
      path: '/caf/:id',
      operationId: 'deleteCaf',
      summary: 'Delete a CAF none of whose documents was accepted or ceded',
      tag: 'caf',
      auth: 'bearer_or_session',
      scope: 'caf:write',
      roles: [...OWNER_ADMIN],
      responses: { 200: { description: 'deleted', schema: 'deleted.schema.json' } },
      errors: ['caf.not_found', 'caf.has_accepted_dtes', 'caf.has_ceded_dtes', 'sii_env_mismatch'],
      handler: async (ctx) => {
        const row = await deleteCaf(
          deps.dataSource,
          deps.cafDocuments,
          principalOf(ctx),
          ctx.params.id,
          now(),
        );
        ctx.body = { id: row.id, deleted_at: new Date(row.deleted_at!).toISOString() };
      },
    },
  ];
}
