import { audit } from '@dte/accounts';
import type { Context } from 'koa';
import type { ApiDeps, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { parseMultipart } from '../http/multipart';
import {
  activateCertificate,
  certificateRecord,
  deleteCertificate,
  listCertificates,
  uploadCertificate,
} from '@dte/certificates';
import { principalOf } from './route-kit';

const OWNER_ADMIN = ['owner', 'admin'] as const;

/** Certificate changes are security-relevant: written to the audit log (issue 14). */
async function auditCertificate(
  deps: ApiDeps,
  ctx: Context,
  action: 'certificate.uploaded' | 'certificate.activated' | 'certificate.deleted',
  detail: Record<string, unknown>,
): Promise<void> {
  const p = principalOf(ctx);
  await audit(deps.dataSource, {
    organizationId: p.organizationId,
    actor: p.actorId,
    action,
    detail,
    ip: ctx.ip,
  });
}

export function certificateRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  return [
    {
      method: 'post',
      path: '/certificates',
      operationId: 'uploadCertificate',
      summary: 'Upload a .p12 signing certificate (multipart: file, password, label)',
      tag: 'certificates',
      auth: 'bearer_or_session',
      scope: 'certificates:write',
      roles: [...OWNER_ADMIN],
      body: { kind: 'multipart', schema: 'certificate-upload.schema.json' },
      responses: { 201: { description: 'certificate stored', schema: 'certificate.schema.json' } },
      errors: [
        'cert.invalid_request',
        'cert.invalid',
        'cert.duplicate',
        'cert_subject_mismatch',
        'cert_expired',
        'cert.kms_unavailable',
        'cert.insert_failed',
      ],
      handler: async (ctx) => {
        const principal = principalOf(ctx);
        const form = await parseMultipart(ctx, 'cert.invalid_request');
        const file = form.files.file;
        const password = form.fields.password;
        const label = form.fields.label?.trim();
        const missing = [
          ...(file && file.data.length > 0 ? [] : ['file']),
          ...(password ? [] : ['password']),
          ...(label ? [] : ['label']),
        ];
        if (missing.length > 0) {
          throw new ApiError('cert.invalid_request', `Missing ${missing.join(', ')}.`, {
            detail: { missing },
          });
        }
        if (label!.length > 100) {
          throw new ApiError('cert.invalid_request', 'label is at most 100 characters.', {
            detail: { field: 'label' },
          });
        }
        const row = await uploadCertificate(
          deps.dataSource,
          deps.keys,
          principal.organizationId,
          { p12: file!.data, password: password!, label: label! },
          now(),
          principal.companyId,
        );
        await auditCertificate(deps, ctx, 'certificate.uploaded', { certificate_id: row.id, label: label! });
        ctx.status = 201;
        ctx.body = certificateRecord(row, now());
      },
    },
    {
      method: 'get',
      path: '/certificates',
      operationId: 'listCertificates',
      summary: 'List the current certificates (metadata only)',
      tag: 'certificates',
      auth: 'bearer_or_session',
      scope: 'certificates:read',
      responses: { 200: { description: 'current certificates', schema: 'certificate-list.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        // a company-scoped key sees its company's signers' certificates only
        const rows = await listCertificates(deps.dataSource, p.organizationId, p.companyId);
        ctx.body = { data: rows.map((r) => certificateRecord(r, now())), next_cursor: null };
      },
    },
    {
      method: 'post',
      path: '/certificates/:id/activate',
      operationId: 'activateCertificate',
      summary: 'Make a certificate the default signing certificate',
      tag: 'certificates',
      auth: 'bearer_or_session',
      scope: 'certificates:write',
      roles: [...OWNER_ADMIN],
      responses: { 200: { description: 'the certificate, now default', schema: 'certificate.schema.json' } },
      errors: ['cert.not_found', 'cert.expired'],
      handler: async (ctx) => {
        const row = await activateCertificate(
          deps.dataSource,
          principalOf(ctx).organizationId,
          ctx.params.id,
          now(),
          principalOf(ctx).companyId,
        );
        await auditCertificate(deps, ctx, 'certificate.activated', { certificate_id: row.id });
        ctx.body = certificateRecord(row, now());
      },
    },
    {
      method: 'delete',
      path: '/certificates/:id',
      operationId: 'deleteCertificate',
      summary: 'Soft-delete a certificate',
      tag: 'certificates',
      auth: 'bearer_or_session',
      scope: 'certificates:write',
      roles: [...OWNER_ADMIN],
      responses: { 200: { description: 'deleted', schema: 'deleted.schema.json' } },
      errors: ['cert.not_found', 'cert.last_remaining'],
      handler: async (ctx) => {
        const row = await deleteCertificate(
          deps.dataSource,
          principalOf(ctx).organizationId,
          ctx.params.id,
          now(),
          principalOf(ctx).companyId,
        );
        await auditCertificate(deps, ctx, 'certificate.deleted', { certificate_id: row.id });
        ctx.body = { id: row.id, deleted_at: new Date(row.deleted_at!).toISOString() };
      },
    },
  ];
}
