import { createDataSource, runMigrations } from '@dte/database';
import type { DataSource } from 'typeorm';

/**
 * The api's DataSource: the shared factory of @dte/database (every entity and migration of the
 * service, never synchronized). `schema` puts every table in that schema (tests use a fresh one).
 */
export function apiDataSource(opts: { url: string; schema?: string; poolSize?: number }): DataSource {
  return createDataSource({
    url: opts.url,
    schema: opts.schema,
    poolSize: opts.poolSize,
    applicationName: 'dte-api',
  });
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
