/**
 * The typeorm DataSource of every service: PostgreSQL from DATABASE_URL, optionally inside one
 * schema (tests get a fresh schema each run), entities and migrations from the barrels
 * `entities/index.ts` and `migrations/index.ts`. The schema is never synchronized from the
 * entities: it changes only through migrations, run explicitly (`runMigrations`, `npm run migrate`).
 */
import os from 'node:os';
import 'reflect-metadata';
import { DataSource, type EntityManager, type MixedList } from 'typeorm';
import { entities as allEntities } from './entities';
import { migrations as allMigrations } from './migrations';
import { SqlErrorLogger } from './sql-error-logger';

export interface DatabaseOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** a PostgreSQL schema to hold every table (and the migrations table); `public` when absent */
  schema?: string;
  /** connection pool size (10 by default) */
  poolSize?: number;
  /** log every SQL statement (for debugging) */
  logSql?: boolean;
  /** the application_name PostgreSQL shows for these connections */
  applicationName?: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities?: MixedList<Function>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations?: MixedList<Function>;
}

export class DatabaseConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseConfigError';
  }
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema))
    throw new DatabaseConfigError(
      `schema name "${schema}" must match ${SCHEMA_NAME} (lower case, digits, _)`,
    );
}

/** Reads DATABASE_URL (required) and DATABASE_SCHEMA (optional). */
export function databaseOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseOptions {
  const url = env.DATABASE_URL ?? '';
  if (!/^postgres(ql)?:\/\/\S+$/.test(url))
    throw new DatabaseConfigError('DATABASE_URL is required (postgres://user:password@host:port/database)');
  const schema = env.DATABASE_SCHEMA || undefined;
  if (schema) assertSchemaName(schema);
  return { url, schema };
}

/**
 * The application_name of a process's connections: `<name>@<host>:<pid>` (at most 63 bytes, what
 * PostgreSQL keeps), so pg_stat_activity tells which pod and process holds each backend, whatever
 * the transport (TCP or a Unix socket); the pipeline benchmark finds each service's backends by it.
 */
export function connectionApplicationName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const suffix = `:${process.pid}`;
  return `${name}@${os.hostname()}`.slice(0, 63 - suffix.length) + suffix;
}

/** A DataSource that is not yet connected (call `initialize()`). */
export function createDataSource(options: DatabaseOptions): DataSource {
  if (options.schema) assertSchemaName(options.schema);
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    // Unqualified names in migrations and raw queries resolve to the chosen schema.
    extra: {
      max: options.poolSize ?? 10,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    },
    applicationName: connectionApplicationName(options.applicationName),
    entities: options.entities ?? allEntities,
    migrations: options.migrations ?? allMigrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    // failed queries are logged without their parameters (SqlErrorLogger); LOG_SQL-style
    // debugging (logSql) keeps typeorm's own logger, parameters included, for local use only
    logging: options.logSql ? 'all' : ['error'],
    ...(options.logSql ? {} : { logger: new SqlErrorLogger() }),
  });
}

/** Runs `work` in one transaction (READ COMMITTED); rolled back when it throws. */
export function inTransaction<T>(ds: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  return ds.transaction(work);
}
