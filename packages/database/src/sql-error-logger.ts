import type { Logger as TypeormLogger } from 'typeorm';

/**
 * typeorm's logger for failed queries, without their parameters: the default one prints
 * `-- PARAMETERS: [...]` (RUTs, names, amounts, whole documents) and the driver's message, which
 * for some errors quotes a value. This one writes one JSON line to stderr with the SQL text
 * (parameterized, so it holds no values; cut at 500 characters), the SQLSTATE code and the
 * constraint or table named by PostgreSQL. Migrations and warnings pass through.
 */
export class SqlErrorLogger implements TypeormLogger {
  logQuery(): void {}

  logQuerySlow(): void {}

  logSchemaBuild(): void {}

  logQueryError(error: string | Error, query: string): void {
    const e = (typeof error === 'string' ? {} : error) as {
      code?: unknown;
      constraint?: unknown;
      table?: unknown;
      driverError?: { code?: unknown; constraint?: unknown; table?: unknown };
    };
    const line = {
      level: 50,
      time: Date.now(),
      name: 'typeorm',
      msg: 'query failed',
      code: e.code ?? e.driverError?.code ?? null,
      constraint: e.constraint ?? e.driverError?.constraint ?? null,
      table: e.table ?? e.driverError?.table ?? null,
      query: query.replace(/\s+/g, ' ').slice(0, 500),
    };
    process.stderr.write(`${JSON.stringify(line)}\n`);
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
