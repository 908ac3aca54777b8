import type { DataSource } from 'typeorm';
import { logFailedQuery } from './sql-error-logger';

/**
 * A value as an SQL literal: a string, or an array of strings and nulls as the text of a
 * PostgreSQL array (elements double-quoted, each backslash and double quote escaped with a
 * backslash, as node-postgres sends an array parameter), in an escape string constant E'…'
 * (backslashes and single quotes doubled), which reads the same
 * whatever standard_conforming_strings says. For the statements of a simple-protocol query
 * (SimpleClient.run), which carries no parameters; the SQL adds the cast
 * (`${sqlLiteral(ids)}::uuid[]`).
 */
export function sqlLiteral(value: string | null | (string | null)[]): string {
  if (value === null) return 'NULL';
  // PostgreSQL's text holds no NUL (it refuses one in a parameter too), and node-postgres ends a
  // query's text at the first one
  if ((Array.isArray(value) ? value : [value]).some((v) => v?.includes('\u0000')))
    throw new Error('sqlLiteral: a NUL character cannot be stored in text');
  const text = Array.isArray(value)
    ? `{${value.map((e) => (e === null ? 'NULL' : `"${e.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`
    : value;
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** A pooled node-postgres connection, as queryPrepared reaches it (typeorm's driver `master`). */
interface PgPoolClient {
  query(text: string): Promise<PgResult | PgResult[]>;
  query(config: { name?: string; text: string; values: unknown[] }): Promise<PgResult>;
  release(err?: Error | boolean): void;
}
interface PgResult {
  rows: unknown[];
}

/**
 * A statement a connection PREPAREs once (`PREPARE name(types) AS sql`) and then runs as
 * `EXECUTE name(…)` inside a simple-protocol query: parsed, analysed and (after PostgreSQL's first
 * custom plans) planned once per connection, as queryPrepared's named statements are, while still
 * sharing its round trip with BEGIN or COMMIT. For statements whose plan is fixed by unique or
 * exact-match indexes (see queryPrepared).
 */
export interface PreparedSql {
  /** the prepared statement's name: unique in the process */
  name: string;
  /** the parameters' types, in order (`text`, `uuid[]` …) */
  types: string[];
  /** the statement, with its parameters $1…$n */
  sql: string;
}

/** `EXECUTE` of a PreparedSql with these values (as sqlLiteral, in the order of its types). */
export function executeSql(stmt: PreparedSql, values: (string | null | (string | null)[])[]): string {
  if (values.length !== stmt.types.length)
    throw new Error(`${stmt.name}: ${values.length} values for ${stmt.types.length} parameters`);
  return `EXECUTE ${stmt.name}(${values.map(sqlLiteral).join(', ')})`;
}

/** the PreparedSql names each connection holds */
const preparedOn = new WeakMap<PgPoolClient, Set<string>>();

/**
 * One pooled connection taken from a typeorm DataSource's pool for a transaction driven by hand,
 * so that its control statements share round trips with its work: `run('BEGIN', sql)` and
 * `run(sql, 'COMMIT')` are ONE simple-protocol query each (several statements, no parameters:
 * values go in as sqlLiteral), where typeorm's `transaction()` sends BEGIN and COMMIT as round
 * trips of their own. A failed statement stops the query there (PostgreSQL skips the rest of it:
 * no COMMIT after a failed write). Failures are logged as typeorm's are (SqlErrorLogger), with the
 * statement's `template` (the SQL without its values: a log never holds them).
 */
export class SimpleClient {
  private constructor(private readonly client: PgPoolClient) {}

  static async connect(ds: DataSource): Promise<SimpleClient> {
    const pool = (ds.driver as unknown as { master: { connect(): Promise<PgPoolClient> } }).master;
    return new SimpleClient(await pool.connect());
  }

  /**
   * PREPAREs the statement on this connection unless it holds it already (a round trip of its
   * own, once per connection; outside any transaction, so no rollback can undo it).
   */
  async prepare(stmt: PreparedSql): Promise<void> {
    const held = preparedOn.get(this.client) ?? new Set<string>();
    preparedOn.set(this.client, held);
    if (held.has(stmt.name)) return;
    try {
      await this.client.query(`PREPARE ${stmt.name}(${stmt.types.join(', ')}) AS ${stmt.sql}`);
    } catch (err) {
      // 42P05 duplicate_prepared_statement: the connection has it already
      if ((err as { code?: string }).code !== '42P05') {
        logFailedQuery(err, stmt.sql);
        throw err;
      }
    }
    held.add(stmt.name);
  }

  /** Runs the statements as one simple query; returns the rows of each, in order. */
  async run<T = Record<string, unknown>>(template: string, ...statements: string[]): Promise<T[][]> {
    try {
      const res = await this.client.query(statements.join(';\n'));
      return (Array.isArray(res) ? res : [res]).map((r) => r.rows as T[]);
    } catch (err) {
      logFailedQuery(err, template);
      throw err;
    }
  }

  /**
   * One parameterized statement (extended protocol); with a `name`, a named statement that
   * node-postgres prepares once on each connection.
   */
  async query<T = Record<string, unknown>>(text: string, values: unknown[], name?: string): Promise<T[]> {
    try {
      return (await this.client.query(name ? { name, text, values } : { text, values })).rows as T[];
    } catch (err) {
      logFailedQuery(err, text);
      throw err;
    }
  }

  /**
   * Gives the connection back to the pool: after an error, ROLLBACK first (a failed transaction
   * stays open until then), and a connection that fails even that is dropped.
   */
  async release(failed: boolean): Promise<void> {
    if (!failed) {
      this.client.release();
      return;
    }
    try {
      await this.client.query('ROLLBACK');
      this.client.release();
    } catch (err) {
      this.client.release(err as Error);
    }
  }
}
