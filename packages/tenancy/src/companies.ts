import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';

/** 412 org.rut_missing when the organization has no company (no emitter RUT) yet. */
export async function assertOrganizationHasRut(db: DataSource, organizationId: string): Promise<void> {
  const rows: { n: string }[] = await db.query(
    'SELECT count(*) AS n FROM companies WHERE organization_id = $1',
    [organizationId],
  );
  if (Number(rows[0].n) === 0) {
    throw new ApiError(
      'org.rut_missing',
      'The organization has no company RUT yet; register its emitter first.',
    );
  }
}
