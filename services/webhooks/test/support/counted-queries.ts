import type { DataSource } from 'typeorm';

/**
 * The data source with its `query` calls counted: what a PgWebhookStore built on `counted` sends
 * to PostgreSQL, one statement a call. `reset()` starts a new count.
 */
export function countQueries(ds: DataSource): { counted: DataSource; count(): number; reset(): void } {
  let statements = 0;
  const counted = new Proxy(ds, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return (...args: Parameters<typeof target.query>) => {
          statements++;
          return target.query(...args);
        };
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return {
    counted,
    count: () => statements,
    reset: () => {
      statements = 0;
    },
  };
}
