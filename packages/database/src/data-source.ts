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
  /**
   * how long an idle pooled connection is kept (ms; node-postgres closes them after 10 s by
   * default). A server that closes its connections between bursts opens them again at the next
   * one: a PostgreSQL backend to fork and authenticate, and its catalog caches and prepared
   * statements to build again, inside the requests that wait for them
   */
  idleTimeoutMs?: number;
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
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMillis: options.idleTimeoutMs } : {}),
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

/**
 * Opens `connections` pooled connections at once (all of the pool by default) and plans a query
 * over `tables` in each, so that a server's first requests find the connections open and their
 * backends' catalog caches loaded (relations and their indexes), instead of paying for both under
 * the first burst of load. Call it before the server reports ready.
 */
export async function warmPool(
  ds: DataSource,
  tables: readonly string[],
  connections = Number((ds.options.extra as { max?: number } | undefined)?.max ?? 10),
): Promise<void> {
  const touch = tables.length
    ? `SELECT NULL FROM ${tables.map((t, i) => `${t} t${i}`).join(', ')} WHERE false`
    : 'SELECT 1';
  const runners = Array.from({ length: connections }, () => ds.createQueryRunner());
  try {
    await Promise.all(runners.map((r) => r.connect()));
    await Promise.all(runners.map((r) => r.query(touch)));
  } finally {
    await Promise.all(runners.map((r) => r.release()));
  }
}
