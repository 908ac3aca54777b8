import type { ApiDeps, RouteDef } from '../context';
import { listCurrentBranches } from '@dte/tenancy';
import { principalOf } from './route-kit';

export function branchRoutes(deps: ApiDeps): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/sucursales',
      operationId: 'listSucursales',
      summary: "Current branches of the key's company (of every company of the organization for a session)",
      tag: 'companies',
      auth: 'bearer_or_session',
      scope: 'dte:read',
      responses: { 200: { description: 'current branches', schema: 'branch-list.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        const p = principalOf(ctx);
        ctx.body = await listCurrentBranches(deps.dataSource, p.organizationId, p.companyId);
      },
    },
  ];
}
