/**
 * Fixtures of the /dtes tests: an organization with a certificate and CAFs loaded over HTTP, and
 * an emission body of every supported type (support/emission-bodies.ts, dated today in
 * America/Santiago).
 */
import { randomUUID } from 'node:crypto';
import { createDataSource } from '@dte/database';
import { createTestCaf, santiagoDate } from '@dte/engine';
import { testStack } from '../../../test/support/env';
import { validateBody } from '@dte/http-contract';
import type { SeedInput } from '../src/seed';
import { cafForm, call, newRut, uploadCert, type Answer, type TestApi } from './support/test-api';

export { body, boletaBody, today } from './support/emission-bodies';

export interface DteOrg {
  key: string;
  rut: string;
  orgId: string;
  companyId: string;
  certId: string;
}

/**
 * A company with full profile, one certificate and a CAF (folios 1..hasta) of each type. In
 * production its organization is enabled and it is certified for `prodTipos` (every type unless
 * given).
 */
export async function orgWithCafs(
  t: TestApi,
  opts: {
    tipos?: number[];
    hasta?: number;
    withCert?: boolean;
    env?: 'cert' | 'prod';
    prodTipos?: number[];
    /** the company's RUT (default a fresh one) */
    rut?: string;
  } = {},
): Promise<DteOrg> {
  const rut = opts.rut ?? newRut();
  const s = await t.seed({
    rut,
    env: opts.env ?? 'cert',
    ...(opts.env === 'prod'
      ? { prodEnabled: true, prodTipos: opts.prodTipos ?? [33, 34, 46, 52, 56, 61, 110, 112] }
      : {}),
    giro: 'Venta de ferretería',
    direccion: 'Av. Providencia 1234',
    comuna: 'Providencia',
    actividadEconomica: 467300,
  });
  let certId = '';
  if (opts.withCert !== false) certId = (await uploadCert(t, s.api_key, rut)).id;
  for (const tipo of opts.tipos ?? [33])
    await uploadCaf(t, s.api_key, rut, { tipo, hasta: opts.hasta ?? 50 });
  return { key: s.api_key, rut, orgId: s.organization_id, companyId: s.company_id, certId };
}

/**
 * A CAF of `rut` signed by the simulator's SII key (certification), folios desde..hasta, uploaded
 * over HTTP with `key`; its record. Authorized today unless `fechaAutorizacion` says otherwise.
 */
export async function uploadCaf(
  t: TestApi,
  key: string,
  rut: string,
  opts: { tipo?: number; desde?: number; hasta: number; razonSocial?: string; fechaAutorizacion?: string },
): Promise<{ id: string }> {
  const xml = createTestCaf({
    siiKey: t.sim.siiKeys.cert,
    rutEmisor: rut,
    razonSocial: opts.razonSocial ?? 'EMPRESA DE PRUEBA',
    tipoDte: opts.tipo ?? 33,
    desde: opts.desde ?? 1,
    hasta: opts.hasta,
    fechaAutorizacion: opts.fechaAutorizacion ?? santiagoDate(new Date()),
    keyBits: 512,
  });
  const res = await call<{ id: string }>(t.url, 'POST', '/caf', { key, form: cafForm(xml) });
  if (res.status !== 201) throw new Error(`CAF upload failed: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Another company of `o`'s organization, with a certificate of its own signer (its RUT) and an
 * API key of its own (no CAF): what a company-scoped key must never sign with.
 */
export async function otherCompanyOf(
  t: TestApi,
  o: Pick<DteOrg, 'orgId'>,
  seed: Partial<SeedInput> = {},
): Promise<DteOrg> {
  const [{ name }]: { name: string }[] = await t.db.dataSource.query(
    'SELECT name FROM organizations WHERE id = $1',
    [o.orgId],
  );
  const rut = newRut();
  const s = await t.seed({ ...seed, org: name, rut, signerRuts: [rut] });
  if (s.organization_id !== o.orgId) throw new Error('the other company went to another organization');
  const cert = await uploadCert(t, s.api_key, rut);
  return { key: s.api_key, rut, orgId: s.organization_id, companyId: s.company_id, certId: cert.id };
}

/** POST /dtes with a fresh (or given) Idempotency-Key and the org's certificate. */
export function emit(
  t: TestApi,
  o: DteOrg,
  json: unknown,
  opts: { idem?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(o.certId ? { 'X-Cert-Id': o.certId } : {}), ...opts.headers };
  if (opts.idem !== null) headers['Idempotency-Key'] = opts.idem ?? randomUUID();
  return call(t.url, 'POST', '/dtes', { key: o.key, json, headers });
}

/** next_folio of the org's CAF of `tipo`, read independently of the api. */
export async function nextFolio(t: TestApi, o: DteOrg, tipo: number): Promise<number> {
  const rows: { next_folio: string }[] = await t.db.dataSource.query(
    'SELECT next_folio FROM cafs WHERE organization_id = $1 AND tipo_dte = $2',
    [o.orgId, tipo],
  );
  return Number(rows[0].next_folio);
}

/** Checks an answer body against its schemas/http file (the one the OpenAPI document shows). */
export function expectSchema(file: string, value: unknown): void {
  try {
    validateBody(file, value);
  } catch (err) {
    throw new Error(`${file}: ${JSON.stringify((err as { issues?: unknown }).issues ?? String(err))}`);
  }
}

/**
 * Holds every emission of the company at its folio: its CAF rows locked FOR UPDATE by a
 * transaction on a connection outside the api's pool, so requests stay in flight for as long as
 * a test or bench needs (a fact it sets up, not a race). `release()` commits and closes it.
 */
export async function holdCompanyFolios(t: TestApi, o: DteOrg): Promise<{ release(): Promise<void> }> {
  const lockDb = createDataSource({
    url: (await testStack()).databaseUrl,
    schema: t.db.schema,
    poolSize: 1,
    entities: [],
    migrations: [],
  });
  await lockDb.initialize();
  const lock = lockDb.createQueryRunner();
  await lock.connect();
  await lock.startTransaction();
  const release = async () => {
    await lock.commitTransaction();
    await lock.release();
    await lockDb.destroy();
  };
  try {
    await lock.query('SELECT id FROM cafs WHERE company_id = $1 FOR UPDATE', [o.companyId]);
  } catch (err) {
    await release();
    throw err;
  }
  return { release };
}
