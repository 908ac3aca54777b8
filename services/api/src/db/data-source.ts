import { createDataSource, runMigrations, warmPool } from '@dte/database';
import type { DataSource } from 'typeorm';

/**
 * The api keeps its idle connections 5 minutes (node-postgres' default is 10 s): a burst after a
 * pause otherwise opens them again inside the requests that wait for them (issue 27).
 */
const API_POOL_IDLE_MS = 300_000;

/** What POST /dtes reads and writes: planned once in each pooled connection before the api is ready. */
const EMISSION_TABLES = ['api_keys', 'companies', 'certificates', 'cafs', 'dtes', 'dte_events', 'outbox'];

/**
 * The api's DataSource: the shared factory of @dte/database (every entity and migration of the
 * service, never synchronized). `schema` puts every table in that schema (tests use a fresh one).
 */
export function apiDataSource(opts: { url: string; schema?: string; poolSize?: number }): DataSource {
  return createDataSource({
    url: opts.url,
    schema: opts.schema,
    poolSize: opts.poolSize,
    idleTimeoutMs: API_POOL_IDLE_MS,
    applicationName: 'dte-api',
  });
}

/**
 * Opens every pooled connection and loads the emission tables into each backend's caches, so the
 * first minute after start does not pay for them under load (the cold start of issue 27).
 */
export function warmApiPool(ds: DataSource): Promise<void> {
  return warmPool(ds, EMISSION_TABLES);
}

/** Connects and applies pending migrations (creating the schema when missing). */
export async function openApiDatabase(opts: {
  url: string;
  schema?: string;
  poolSize?: number;
}): Promise<DataSource> {
  const ds = apiDataSource(opts);
  await runMigrations(ds);
  return ds;
}
