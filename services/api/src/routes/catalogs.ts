import { audit } from '@dte/accounts';
import type { ApiDeps, RouteDef } from '../context';
import { ApiError } from '@dte/error-catalog';
import { isUuid, returnedRows } from '@dte/database';
import { normalizeRut } from '@dte/tenancy';
import { principalOf } from './route-kit';

interface CounterpartRow {
  company_id: string;
  rut_emisor: string;
  rut: string;
  razon_social: string;
  giro: string | null;
  direccion: string | null;
  comuna: string | null;
  correo: string | null;
  origen: 'editada' | 'emisiones';
  ultima_emision: Date | null;
}

/**
 * Counterparts (receivers) of each company: the ones the organization edited (table
 * `counterparts`) and, for every other RUT, the receptor block of the latest emission to it —
 * so a receiver is remembered by issuing to it, and editing it makes the organization's data win.
 */
const COUNTERPARTS = `
  WITH emitted AS (
    SELECT DISTINCT ON (d.company_id, d.rut_receptor)
           d.company_id, d.rut_receptor AS rut, d.razon_social_receptor AS razon_social,
           d.input->'receptor'->>'giro' AS giro, d.input->'receptor'->>'direccion' AS direccion,
           d.input->'receptor'->>'comuna' AS comuna, d.input->'correo_receptor'->>0 AS correo,
           d.created_at AS ultima_emision
      FROM dtes d
     WHERE d.organization_id = $1 AND d.rut_receptor IS NOT NULL AND ($2::uuid IS NULL OR d.company_id = $2)
     ORDER BY d.company_id, d.rut_receptor, d.created_at DESC
  )
  SELECT c.id AS company_id, c.rut AS rut_emisor, x.rut, x.razon_social, x.giro, x.direccion, x.comuna, x.correo,
         x.origen, e.ultima_emision
    FROM (
      SELECT company_id, rut, razon_social, giro, direccion, comuna, correo, 'editada' AS origen FROM counterparts
      UNION ALL
      SELECT company_id, rut, razon_social, giro, direccion, comuna, correo, 'emisiones' FROM emitted em
       WHERE NOT EXISTS (SELECT 1 FROM counterparts k WHERE k.company_id = em.company_id AND k.rut = em.rut)
    ) x
    JOIN companies c ON c.id = x.company_id
    LEFT JOIN emitted e ON e.company_id = x.company_id AND e.rut = x.rut
   WHERE c.organization_id = $1 AND ($2::uuid IS NULL OR c.id = $2)`;

const showCounterpart = (r: CounterpartRow) => ({
  ...r,
  ultima_emision: r.ultima_emision ? new Date(r.ultima_emision).toISOString() : null,
});

/** The company register (/sii/empresas/:id) and the counterparts catalog (/contrapartes). */
export function catalogRoutes(deps: ApiDeps): RouteDef[] {
  const db = deps.dataSource;
  return [
    {
      method: 'get',
      path: '/sii/empresas/:id',
      operationId: 'getEmpresa',
      summary: "A company of the organization's register (the key's own company for an API key)",
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: 'the company' } },
      errors: ['empresa.not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const rows = isUuid(ctx.params.id)
          ? await db.query(
              `SELECT c.id, c.rut, c.razon_social, c.giro, c.direccion, c.comuna, c.actividad_economica,
                      c.resolucion_cert_numero, to_char(c.resolucion_cert_fecha, 'YYYY-MM-DD') AS resolucion_cert_fecha,
                      c.resolucion_prod_numero, to_char(c.resolucion_prod_fecha, 'YYYY-MM-DD') AS resolucion_prod_fecha,
                      c.prod_tipos, o.prod_enabled, o.situacion_estado,
                      (SELECT count(*)::int FROM branches b WHERE b.company_id = c.id AND b.closed_at IS NULL) AS sucursales
                 FROM companies c JOIN organizations o ON o.id = c.organization_id
                WHERE c.id = $1 AND c.organization_id = $2 AND ($3::uuid IS NULL OR c.id = $3)`,
              [ctx.params.id, p.organizationId, p.companyId],
            )
          : [];
        if (!rows[0])
          throw new ApiError('empresa.not_found', 'No company with that id in this organization.');
        ctx.body = rows[0];
      },
    },
    {
      method: 'put',
      path: '/sii/empresas/:id',
      operationId: 'putEmpresa',
      summary: 'Edit the issuer data of a company (owners and admins; session only)',
      tag: 'companies',
      auth: 'session',
      roles: ['owner', 'admin'],
      body: { kind: 'json', schema: 'company-update.schema.json' },
      responses: { 200: { description: 'the company' } },
      errors: ['empresa.not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const b = ctx.state.body as Record<string, string | number | undefined>;
        const cols = [
          'razon_social',
          'giro',
          'direccion',
          'comuna',
          'actividad_economica',
          'resolucion_cert_numero',
          'resolucion_cert_fecha',
        ].filter((c) => b[c] !== undefined);
        const done: unknown = isUuid(ctx.params.id)
          ? await db.query(
              `UPDATE companies SET ${cols.map((c, i) => `${c} = $${i + 3}`).join(', ')}
                WHERE id = $1 AND organization_id = $2`,
              [ctx.params.id, p.organizationId, ...cols.map((c) => b[c])],
            )
          : [[], 0];
        if (!Array.isArray(done) || done[1] !== 1) {
          throw new ApiError('empresa.not_found', 'No company with that id in this organization.');
        }
        await audit(db, {
          organizationId: p.organizationId,
          actor: p.actorId,
          action: 'company.updated',
          detail: { company_id: ctx.params.id, fields: cols },
          ip: ctx.ip,
        });
        ctx.body = { id: ctx.params.id, updated: cols };
      },
    },
    {
      method: 'get',
      path: '/sii/empresas',
      operationId: 'listEmpresas',
      summary: "Companies of the organization's register",
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: '{data}' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        ctx.body = {
          data: await db.query(
            `SELECT id, rut, razon_social, giro, direccion, comuna FROM companies
              WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY rut`,
            [p.organizationId, p.companyId],
          ),
        };
      },
    },
    {
      method: 'post',
      path: '/sucursales',
      operationId: 'createSucursal',
      summary: 'Add a branch (with its SII code) to a company',
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:write',
      roles: ['owner', 'admin'],
      body: { kind: 'json', schema: 'branch-create.schema.json' },
      responses: { 201: { description: 'the branch', schema: 'created-id.schema.json' } },
      errors: ['empresa.not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const b = ctx.state.body as {
          rut_emisor?: string;
          nombre: string;
          direccion: string;
          comuna: string;
          codigo_sii?: number;
        };
        const rut = b.rut_emisor ? normalizeRut(b.rut_emisor) : null;
        const companies: { id: string; rut: string }[] = await db.query(
          `SELECT id, rut FROM companies WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2)
              AND ($3::text IS NULL OR rut = $3) ORDER BY created_at LIMIT 2`,
          [p.organizationId, p.companyId, rut],
        );
        if (companies.length !== 1) {
          throw new ApiError(
            'empresa.not_found',
            rut ? `No company ${rut} here.` : 'Say rut_emisor: the organization has several companies.',
          );
        }
        const rows = await db.query(
          `INSERT INTO branches (company_id, nombre, direccion, comuna, codigo_sii) VALUES ($1, $2, $3, $4, $5)
           RETURNING id, nombre, codigo_sii, direccion, comuna`,
          [companies[0].id, b.nombre.trim(), b.direccion.trim(), b.comuna.trim(), b.codigo_sii ?? null],
        );
        ctx.status = 201;
        ctx.body = { ...rows[0], rut_emisor: companies[0].rut };
      },
    },
    {
      method: 'delete',
      path: '/sucursales/:id',
      operationId: 'closeSucursal',
      summary: 'Close a branch: it stops being current (documents already issued keep it)',
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:write',
      roles: ['owner', 'admin'],
      responses: { 200: { description: '{id, closed_at}' } },
      errors: ['not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const closed = isUuid(ctx.params.id)
          ? returnedRows<{ id: string; closed_at: Date }>(
              await db.query(
                `UPDATE branches b SET closed_at = now() FROM companies c
                WHERE b.id = $1 AND c.id = b.company_id AND c.organization_id = $2
                  AND ($3::uuid IS NULL OR c.id = $3) AND b.closed_at IS NULL
                RETURNING b.id, b.closed_at`,
                [ctx.params.id, p.organizationId, p.companyId],
              ),
            )
          : [];
        if (!closed[0]) throw new ApiError('not_found', 'No current branch with that id.');
        ctx.body = { id: closed[0].id, closed_at: new Date(closed[0].closed_at).toISOString() };
      },
    },
    {
      method: 'get',
      path: '/contrapartes',
      operationId: 'listContrapartes',
      summary: 'Receivers of the companies: edited ones and those remembered from emissions',
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: '{data}' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const rows: CounterpartRow[] = await db.query(
          `${COUNTERPARTS} ORDER BY c.rut, x.razon_social, x.rut`,
          [p.organizationId, p.companyId],
        );
        ctx.body = { data: rows.map(showCounterpart) };
      },
    },
    {
      method: 'put',
      path: '/contrapartes/:rut',
      operationId: 'putContraparte',
      summary: "Edit a receiver's data (company: the key's, or ?company_id= for a session with several)",
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:write',
      roles: ['owner', 'admin'],
      body: { kind: 'json', schema: 'counterpart-update.schema.json' },
      query: {
        company_id: { description: 'session only: the company', schema: { type: 'string', format: 'uuid' } },
      },
      responses: { 200: { description: 'the counterpart' } },
      errors: ['empresa.not_found'],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        const rut = normalizeRut(String(ctx.params.rut));
        if (!rut) {
          throw new ApiError('validation_failed', 'The RUT in the path is not valid.', {
            issues: [{ path: '/rut', message: 'must be 12345678-5 with a right check digit' }],
          });
        }
        const wanted =
          p.companyId ?? (typeof ctx.query.company_id === 'string' ? ctx.query.company_id : null);
        if (wanted !== null && !isUuid(wanted)) throw new ApiError('empresa.not_found', 'No such company.');
        const companies: { id: string }[] = await db.query(
          `SELECT id FROM companies WHERE organization_id = $1 AND ($2::uuid IS NULL OR id = $2) LIMIT 2`,
          [p.organizationId, wanted],
        );
        if (!companies[0] || (!wanted && companies.length > 1)) {
          throw new ApiError(
            'empresa.not_found',
            wanted ? 'No such company in this organization.' : 'Say company_id.',
          );
        }
        const b = ctx.state.body as Record<string, string | null | undefined>;
        await db.query(
          `INSERT INTO counterparts (company_id, rut, razon_social, giro, direccion, comuna, correo, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, now())
           ON CONFLICT (company_id, rut) DO UPDATE SET razon_social = EXCLUDED.razon_social, giro = EXCLUDED.giro,
             direccion = EXCLUDED.direccion, comuna = EXCLUDED.comuna, correo = EXCLUDED.correo, updated_at = now()`,
          [
            companies[0].id,
            rut,
            b.razon_social,
            b.giro ?? null,
            b.direccion ?? null,
            b.comuna ?? null,
            b.correo ?? null,
          ],
        );
        const rows: CounterpartRow[] = await db.query(`${COUNTERPARTS} AND x.rut = $3`, [
          p.organizationId,
          companies[0].id,
          rut,
        ]);
        ctx.body = showCounterpart(rows[0]);
      },
    },
  ];
}
