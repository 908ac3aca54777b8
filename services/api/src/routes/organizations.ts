import { consultarSituacionTributaria, SituacionError, type SituacionTributaria } from '@dte/sii-client';
import {
  changeMember,
  createOrganization,
  decideAccess,
  listAccessRequests,
  listMembers,
  readAudit,
  requestAccess,
  revalidateSituacion,
  siiControlProof,
  type ControlProofSource,
  type NewOrganization,
  type SituacionSource,
} from '@dte/accounts';
import { isServiceError, ApiError } from '@dte/error-catalog';
import type { ApiDeps, RouteDef } from '../context';
import { accountStores } from '../auth/session';
import { isUuid } from '@dte/database';
import { siiClientOf } from '@dte/reception';
import { principalOf } from './route-kit';

const memberId = (raw: string): string => {
  if (!isUuid(raw)) throw new ApiError('not_found', 'No such member in this organization.');
  return raw;
};

/** The SII situation source of the api: the deps' own, or the simulator's register at SII_BASE_URL. */
export function situacionSource(deps: ApiDeps): SituacionSource {
  if (deps.situacion) return deps.situacion;
  return async (rut: string): Promise<SituacionTributaria> => {
    if (!deps.config.siiBaseUrl) {
      throw new SituacionError('unavailable', 'the real SII has no situacion web service; set SII_BASE_URL');
    }
    return consultarSituacionTributaria(deps.config.siiBaseUrl, rut, { timeoutMs: deps.config.siiTimeoutMs });
  };
}

/** Proof of control of a RUT (control-proof.ts) with the SII (the simulator at SII_BASE_URL). */
export function controlProofSource(deps: ApiDeps, now: () => Date): ControlProofSource {
  return siiControlProof(siiClientOf(deps), { timeoutMs: deps.config.siiTimeoutMs, now });
}

/**
 * Organization onboarding and access requests (spec: POST /organizations, solicitar-acceso,
 * solicitudes-acceso/decidir, me/revalidar-situacion), the members and the audit log.
 */
export function organizationRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  const situacion = situacionSource(deps);
  const control = controlProofSource(deps, now);
  return [
    {
      method: 'post',
      path: '/organizations',
      operationId: 'createOrganization',
      summary:
        'Onboard the company of a RUT (active in the SII): the caller proves control with the certificate of a signer the SII authorizes for it, and becomes its owner',
      tag: 'organizations',
      auth: 'session_user',
      body: { kind: 'json', schema: 'organization-create.schema.json' },
      responses: { 201: { description: 'organization created and chosen for this session' } },
      errors: [
        'empresa.conflict',
        'cert.invalid',
        'cert_subject_mismatch',
        'situacion_tributaria.bloqueada',
        'situacion_tributaria.rate_limit',
        'sii_unavailable',
      ],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const org = await createOrganization(
          deps.dataSource,
          situacion,
          control,
          p.userId!,
          ctx.state.body as NewOrganization,
          {
            ip: ctx.ip,
            now: now(),
          },
        );
        await accountStores(deps).sessions.setOrganization(p.sessionId!, org.id);
        ctx.status = 201;
        ctx.body = org;
      },
    },
    {
      method: 'get',
      path: '/organizations/me',
      operationId: 'getMyOrganization',
      summary: "The session's organization: RUT, SII situation, production gate, companies",
      tag: 'organizations',
      auth: 'session',
      responses: { 200: { description: 'the organization' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const rows = await deps.dataSource.query(
          `SELECT o.id, o.name, o.rut, o.prod_enabled, o.situacion_estado, o.situacion_checked_at,
                  coalesce(json_agg(json_build_object('id', c.id, 'rut', c.rut, 'razon_social', c.razon_social,
                    'prod_tipos', c.prod_tipos) ORDER BY c.rut) FILTER (WHERE c.id IS NOT NULL), '[]') AS empresas
             FROM organizations o LEFT JOIN companies c ON c.organization_id = o.id
            WHERE o.id = $1 GROUP BY o.id`,
          [p.organizationId],
        );
        ctx.body = { ...rows[0], rol: p.role };
      },
    },
    {
      method: 'post',
      path: '/organizations/me/revalidar-situacion',
      operationId: 'revalidateSituacion',
      summary: "Check the organization's company again in the SII register",
      tag: 'organizations',
      auth: 'session',
      roles: ['owner', 'admin'],
      responses: { 200: { description: 'situation stored' } },
      errors: [
        'org.rut_missing',
        'situacion_tributaria.bloqueada',
        'situacion_tributaria.rate_limit',
        'sii_unavailable',
      ],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        ctx.body = await revalidateSituacion(deps.dataSource, situacion, p.organizationId, p.actorId, {
          ip: ctx.ip,
          now: now(),
        });
      },
    },
    {
      method: 'post',
      path: '/organizations/solicitar-acceso',
      operationId: 'requestOrganizationAccess',
      summary: 'Ask the owners of the organization of a company RUT to let the caller in (expires in 7 days)',
      tag: 'organizations',
      auth: 'session_user',
      body: { kind: 'json', schema: 'access-request.schema.json' },
      responses: {
        201: { description: 'request created' },
        200: { description: 'the pending request already made' },
      },
      errors: ['invalid_rut', 'empresa.not_found', 'access_request.rate_limit'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const { record, created } = await requestAccess(
          deps.dataSource,
          p.userId!,
          (ctx.state.body as { rut: string }).rut,
          { ip: ctx.ip, now: now() },
        );
        ctx.status = created ? 201 : 200;
        ctx.body = record;
      },
    },
    {
      method: 'get',
      path: '/organizations/me/solicitudes-acceso',
      operationId: 'listAccessRequests',
      summary: 'Pending access requests of the organization, with their decision tokens (owners)',
      tag: 'organizations',
      auth: 'session',
      roles: ['owner'],
      responses: { 200: { description: 'pending requests' } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = {
          data: await listAccessRequests(deps.dataSource, principalOf(ctx).organizationId, now()),
        };
      },
    },
    {
      method: 'post',
      path: '/organizations/solicitudes-acceso/decidir',
      operationId: 'decideAccessRequest',
      summary: 'An owner approves (with a role) or rejects an access request by its token',
      tag: 'organizations',
      auth: 'session_user',
      body: { kind: 'json', schema: 'access-decision.schema.json' },
      responses: { 200: { description: 'decision taken (or the one already taken)' } },
      errors: ['access_request.not_found', 'access_request.expired'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        try {
          ctx.body = await decideAccess(
            deps.dataSource,
            p.userId!,
            ctx.state.body as { token: string; decision: 'aprobar' | 'rechazar'; rol?: 'admin' | 'member' },
            { ip: ctx.ip, now: now() },
          );
        } catch (err) {
          // a role cause: the spec gives next_action only for the scope cause
          if (isServiceError(err) && err.code === 'forbidden') {
            throw new ApiError('forbidden', err.message, { detail: err.detail, withoutNextAction: true });
          }
          throw err;
        }
      },
    },
    {
      method: 'get',
      path: '/organizations/me/miembros',
      operationId: 'listMembers',
      summary: 'Members of the organization and their roles',
      tag: 'organizations',
      auth: 'session',
      responses: { 200: { description: 'members' } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = { data: await listMembers(deps.dataSource, principalOf(ctx).organizationId) };
      },
    },
    {
      method: 'put',
      path: '/organizations/me/miembros/:userId',
      operationId: 'changeMemberRole',
      summary: "Change a member's role (owners; the last owner keeps the role)",
      tag: 'organizations',
      auth: 'session',
      roles: ['owner'],
      body: { kind: 'json', schema: 'member-update.schema.json' },
      responses: { 200: { description: 'the member' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        ctx.body = await changeMember(
          deps.dataSource,
          {
            orgId: p.organizationId,
            actorUserId: p.userId!,
            userId: memberId(ctx.params.userId),
            role: (ctx.state.body as { rol: 'owner' | 'admin' | 'member' }).rol,
          },
          ctx.ip,
        );
      },
    },
    {
      method: 'delete',
      path: '/organizations/me/miembros/:userId',
      operationId: 'removeMember',
      summary: 'Remove a member from the organization (owners; not the last owner)',
      tag: 'organizations',
      auth: 'session',
      roles: ['owner'],
      responses: { 200: { description: '{user_id, removed: true}' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const userId = memberId(ctx.params.userId);
        await changeMember(
          deps.dataSource,
          { orgId: p.organizationId, actorUserId: p.userId!, userId, role: null },
          ctx.ip,
        );
        ctx.body = { user_id: userId, removed: true };
      },
    },
    {
      method: 'get',
      path: '/audit-log',
      operationId: 'readAuditLog',
      summary: 'Security-relevant actions of the organization, newest first (owners)',
      tag: 'organizations',
      auth: 'session',
      roles: ['owner'],
      query: {
        limit: { description: '1-100, default 50', schema: { type: 'integer', minimum: 1, maximum: 100 } },
        cursor: { description: 'next_cursor of the previous page', schema: { type: 'string' } },
      },
      responses: { 200: { description: '{data, next_cursor}' } },
      errors: [],
      handler: async (ctx) => {
        const limit = ctx.query.limit === undefined ? 50 : Number(ctx.query.limit);
        const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
        if (
          !Number.isInteger(limit) ||
          limit < 1 ||
          limit > 100 ||
          (cursor !== undefined && !/^\d{1,18}$/.test(cursor))
        ) {
          throw new ApiError('validation_failed', 'limit must be 1-100 and cursor a next_cursor.', {
            issues: [{ path: '/limit', message: 'limit 1-100; cursor digits' }],
          });
        }
        ctx.body = await readAudit(deps.dataSource, principalOf(ctx).organizationId, {
          limit,
          before: cursor,
        });
      },
    },
  ];
}
