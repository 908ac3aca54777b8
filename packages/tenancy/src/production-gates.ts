/**
 * The organization gates of production (spec, Authentication item 7), the one place they are
 * decided. An organization issues in production only once an operator enabled it
 * (`organizations.prod_enabled`), and each company only the document types it is certified for
 * there (`companies.prod_tipos`). The certification environment has no gates.
 *
 *   - POST /dtes: onboarding_production_not_authorized (403) for an organization not enabled;
 *     dte.type.prod_not_certified (422) for a type not certified (dte.46.prod_not_certified for
 *     the factura de compra, which is issued in certification first).
 *   - CAFs (upload, SII request, automatic stamping): caf.type_not_prod_certified (409), so no
 *     production folios are stored or asked for a type the company may not issue there.
 */
import type { SiiEnv } from './scopes';
import { ApiError } from '@dte/error-catalog';

/** What a typeorm DataSource or EntityManager offers. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

interface ProductionStanding {
  enabled: boolean;
  tipos: number[];
}

async function standing(db: Queryable, companyId: string): Promise<ProductionStanding> {
  const rows = (await db.query(
    `SELECT o.prod_enabled AS enabled, c.prod_tipos AS tipos
       FROM companies c JOIN organizations o ON o.id = c.organization_id
      WHERE c.id = $1`,
    [companyId],
  )) as ProductionStanding[];
  return rows[0] ?? { enabled: false, tipos: [] };
}

/**
 * POST /dtes: the organization's gate, checked at once (before the body is read), and the
 * returned function checks the document type's once the body is validated. In certification
 * both pass.
 */
export async function productionIssueGate(
  db: Queryable,
  environment: SiiEnv,
  companyId: string,
): Promise<(tipoDte: number) => void> {
  if (environment !== 'prod') return () => undefined;
  const s = await standing(db, companyId);
  if (!s.enabled) {
    throw new ApiError(
      'onboarding_production_not_authorized',
      'This organization is not enabled to issue in production yet; nothing was issued.',
      { detail: { sii_env: 'prod' } },
    );
  }
  return (tipoDte) => {
    if (s.tipos.includes(tipoDte)) return;
    if (tipoDte === 46) {
      throw new ApiError(
        'dte.46.prod_not_certified',
        'The company is not authorized to issue facturas de compra (46) in production; issue them in certification.',
        { detail: { tipoDte, certified: s.tipos } },
      );
    }
    throw new ApiError(
      'dte.type.prod_not_certified',
      `The company is not certified to issue type ${tipoDte} in production; nothing was issued.`,
      { detail: { tipoDte, certified: s.tipos } },
    );
  };
}

/** A production CAF (upload, SII request, automatic stamping) of a type the company may issue there. */
export async function assertCafTypeCertified(
  db: Queryable,
  environment: SiiEnv,
  companyId: string,
  tipoDte: number,
): Promise<void> {
  if (environment !== 'prod') return;
  const s = await standing(db, companyId);
  if (s.enabled && s.tipos.includes(tipoDte)) return;
  throw new ApiError(
    'caf.type_not_prod_certified',
    s.enabled
      ? `The company is not certified to issue type ${tipoDte} in production: no production folios for it.`
      : 'This organization is not enabled to issue in production yet: no production folios.',
    { detail: { tipoDte, certified: s.enabled ? s.tipos : [] } },
  );
}
