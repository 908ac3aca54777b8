import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Counts the SQL statements this process sends to PostgreSQL (every pg client, pooled or not,
 * named or not) until `stop()`. Tests count only while the store they measure is the one at work.
 */
export function countStatements(): { readonly count: number; reset(): void; stop(): void } {
  const pg = createRequire(path.join(process.cwd(), 'package.json'))('pg') as {
    Client: { prototype: { query: (...args: unknown[]) => unknown } };
  };
  const original = pg.Client.prototype.query;
  let n = 0;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    n++;
    return original.apply(this, args);
  };
  return {
    get count() {
      return n;
    },
    reset() {
      n = 0;
    },
    stop() {
      pg.Client.prototype.query = original;
    },
  };
}
