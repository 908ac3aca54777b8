import type { EmisorProfile } from '@dte/engine';
import { queryPrepared } from '@dte/database';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import type { PrincipalPreload } from '@dte/tenancy';
import { certificateRowsOf, currentCertificatesJsonSql, type CertificateRow } from '@dte/certificates';

export interface CompanyProfile {
  id: string;
  rut: string;
  emisor: EmisorProfile;
  /** the SII resolution authorizing the company to issue in each environment (Caratula NroResol/FchResol) */
  resolucion: Record<'cert' | 'prod', { numero: number; fecha: string } | null>;
}

/**
 * The issuing company of an emission as the engine needs it (EmisorProfile) from the company
 * register: the fields the body does not carry. Current branches are its sucursales.
 */
export async function loadCompanyProfile(
  db: DataSource | EntityManager,
  organizationId: string,
  companyId: string,
): Promise<CompanyProfile> {
  return (await readCompany(db, organizationId, companyId, false)).company;
}

/**
 * loadCompanyProfile and, in the same statement, the current certificates that may sign for the
 * company (listCertificates' rows, for chooseSigningCertificate): an emission reads both, one
 * round trip instead of two.
 */
export async function loadCompanyWithCertificates(
  db: DataSource | EntityManager,
  organizationId: string,
  companyId: string,
): Promise<{ company: CompanyProfile; certificates: CertificateRow[] }> {
  const { company, certificates } = await readCompany(db, organizationId, companyId, true);
  return { company, certificates: certificateRowsOf(certificates ?? []) };
}

type CompanyRow = {
  id: string;
  rut: string;
  razon_social: string;
  giro: string | null;
  direccion: string | null;
  comuna: string | null;
  actividad_economica: number | null;
  cert_numero: number | null;
  cert_fecha: string | null;
  prod_numero: number | null;
  prod_fecha: string | null;
  branches: { id: string; nombre: string; codigo_sii: number | null; direccion: string; comuna: string }[];
  certificates?: unknown[];
};

/**
 * The company (by the SQL expressions of its id and organization) with its current branches (in
 * creation order) as JSON, and its current certificates when asked: one row of CompanyRow.
 */
function companySelectSql(companyId: string, organizationId: string, withCertificates: boolean): string {
  return `SELECT c.id, c.rut, c.razon_social, c.giro, c.direccion, c.comuna, c.actividad_economica,
            c.resolucion_cert_numero AS cert_numero, to_char(c.resolucion_cert_fecha, 'YYYY-MM-DD') AS cert_fecha,
            c.resolucion_prod_numero AS prod_numero, to_char(c.resolucion_prod_fecha, 'YYYY-MM-DD') AS prod_fecha,
            coalesce((SELECT json_agg(json_build_object('id', b.id, 'nombre', b.nombre, 'codigo_sii', b.codigo_sii,
                                                        'direccion', b.direccion, 'comuna', b.comuna)
                                      ORDER BY b.created_at)
                        FROM branches b WHERE b.company_id = c.id AND b.closed_at IS NULL), '[]') AS branches
            ${withCertificates ? `, ${currentCertificatesJsonSql(organizationId)} AS certificates` : ''}
       FROM companies c WHERE c.id = ${companyId} AND c.organization_id = ${organizationId}`;
}

/**
 * What POST /dtes reads of its company, carried by the API key's own lookup (RouteDef.preload):
 * a JSON column over the api_keys row `k`, null when the company is gone. One round trip fewer
 * per emission; a session principal has no preload and reads it apart.
 */
export const COMPANY_WITH_CERTIFICATES_PRELOAD: PrincipalPreload = {
  sql: `(SELECT row_to_json(p) FROM (${companySelectSql('k.company_id', 'k.organization_id', true)}) p)`,
};

/** The preload's company, when the principal's API key lookup carried it (undefined otherwise). */
export function preloadedCompanyWithCertificates(
  preloaded: { value: unknown } | undefined,
): { company: CompanyProfile; certificates: CertificateRow[] } | undefined {
  if (!preloaded) return undefined;
  const { company, certificates } = companyOf(preloaded.value as CompanyRow | null);
  return { company, certificates: certificateRowsOf(certificates ?? []) };
}

async function readCompany(
  db: DataSource | EntityManager,
  organizationId: string,
  companyId: string,
  withCertificates: boolean,
): Promise<{ company: CompanyProfile; certificates?: unknown[] }> {
  const sql = companySelectSql('$1', '$2', withCertificates);
  const params = [companyId, organizationId];
  // outside a transaction prepared once per connection (the company's id fixes its plan)
  const rows =
    db instanceof DataSource ? await queryPrepared<CompanyRow>(db, sql, params) : await db.query(sql, params);
  return companyOf(rows[0] ?? null);
}

function companyOf(c: CompanyRow | null): { company: CompanyProfile; certificates?: unknown[] } {
  if (!c) throw new ApiError('empresa.not_found', 'The company of this credential no longer exists.');
  const branches = c.branches;
  const resol = (numero: number | null, fecha: string | null) =>
    numero !== null && fecha !== null ? { numero, fecha } : null;
  const company: CompanyProfile = {
    id: c.id,
    rut: c.rut,
    resolucion: { cert: resol(c.cert_numero, c.cert_fecha), prod: resol(c.prod_numero, c.prod_fecha) },
    emisor: {
      rut: c.rut,
      razonSocial: c.razon_social,
      giro: c.giro ?? '',
      acteco: c.actividad_economica ? [c.actividad_economica] : [],
      direccion: c.direccion ?? '',
      comuna: c.comuna ?? '',
      sucursales: branches.map((b) => ({
        id: b.id,
        nombre: b.nombre,
        ...(b.codigo_sii !== null ? { codigoSii: b.codigo_sii } : {}),
        direccion: b.direccion,
        comuna: b.comuna,
      })),
    },
  };
  return { company, certificates: c.certificates };
}
