import type { DataSource } from 'typeorm';
import { audit } from './audit';
import { parseRut } from './organizations';

/**
 * The operator sets an organization's own API request limit (issue 27): requests per API key and
 * per dashboard user in each RATE_LIMIT_WINDOW_SEC window (`organizations.rate_limit_max`), or
 * `null` for the api's default (RATE_LIMIT_MAX, 20 000 a minute). The api reads it with each key's
 * lookup, so it applies to the next request; clients see it in RateLimit-Limit. Audited with the
 * operator's name and the value before.
 */
export async function setOrganizationRateLimit(
  db: DataSource,
  input: { organization: string; operator: string; max: number | null },
): Promise<{ organization_id: string; rate_limit_max: number | null }> {
  if (input.max !== null && !(Number.isInteger(input.max) && input.max > 0)) {
    throw new Error('the limit must be a positive integer (or null for the default)');
  }
  return db.transaction(async (m) => {
    const byId = /^[0-9a-f-]{36}$/i.test(input.organization);
    const rut = byId ? null : parseRut(input.organization);
    const rows: { id: string; before: number | null }[] = await m.query(
      `SELECT id, rate_limit_max AS before FROM organizations WHERE ${byId ? 'id = $1::uuid' : 'rut = $1'} FOR UPDATE`,
      [byId ? input.organization : rut],
    );
    const org = rows[0];
    if (!org) throw new Error(`no organization ${input.organization}`);
    await m.query('UPDATE organizations SET rate_limit_max = $2 WHERE id = $1', [org.id, input.max]);
    await audit(m, {
      organizationId: org.id,
      actor: `operator:${input.operator}`,
      action: 'organization.rate_limit_set',
      detail: { rate_limit_max: input.max, before: org.before },
    });
    return { organization_id: org.id, rate_limit_max: input.max };
  });
}
