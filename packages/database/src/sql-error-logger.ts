import type { Logger as TypeormLogger } from 'typeorm';

/** The unique index of `dtes` on (company_id, sii_env, idempotency_key). */
export const DTES_IDEMPOTENCY_KEY_CONSTRAINT = 'dtes_company_env_idempotency_key_uq';

/**
 * Unique constraints whose violation is how a caller detects a race it then resolves (two
 * requests with one Idempotency-Key: the loser replays the winner's document): logged at info
 * level, not as an error. Any other violation is an error.
 */
const RACE_CONSTRAINTS = new Set([DTES_IDEMPOTENCY_KEY_CONSTRAINT]);

/**
 * typeorm's logger for failed queries, without their parameters: the default one prints
 * `-- PARAMETERS: [...]` (RUTs, names, amounts, whole documents) and the driver's message, which
 * for some errors quotes a value. This one writes one JSON line to stderr with the SQL text
 * (parameterized, so it holds no values; cut at 500 characters), the SQLSTATE code and the
 * constraint or table named by PostgreSQL (violations of RACE_CONSTRAINTS at info level).
 * Migrations and warnings pass through.
 */
export class SqlErrorLogger implements TypeormLogger {
  logQuery(): void {}

  logQuerySlow(): void {}

  logSchemaBuild(): void {}

  logQueryError(error: string | Error, query: string): void {
    logFailedQuery(error, query);
  }

  logMigration(message: string): void {
    process.stderr.write(
      `${JSON.stringify({ level: 30, time: Date.now(), name: 'typeorm', msg: message })}\n`,
    );
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level !== 'warn') return;
    process.stderr.write(
      `${JSON.stringify({ level: 40, time: Date.now(), name: 'typeorm', msg: String(message) })}\n`,
    );
  }
}

/** One JSON line on stderr for a failed query (SqlErrorLogger's format; also used by queryPrepared). */
export function logFailedQuery(error: unknown, query: string): void {
  const e = (error !== null && typeof error === 'object' ? error : {}) as {
    code?: unknown;
    constraint?: unknown;
    table?: unknown;
    driverError?: { code?: unknown; constraint?: unknown; table?: unknown };
  };
  const code = e.code ?? e.driverError?.code ?? null;
  const unique = code === '23505' && RACE_CONSTRAINTS.has(String(e.constraint ?? e.driverError?.constraint));
  const line = {
    level: unique ? 30 : 50,
    time: Date.now(),
    name: 'typeorm',
    msg: unique ? 'query refused by a unique constraint' : 'query failed',
    code,
    constraint: e.constraint ?? e.driverError?.constraint ?? null,
    table: e.table ?? e.driverError?.table ?? null,
    query: query.replace(/\s+/g, ' ').slice(0, 500),
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}
