// Preload that counts the SQL statements a service sends, grouped by their first words, and
// prints them to stderr (the service's log) when the process exits; with PG_STATEMENTS_DIR set it
// also writes <dir>/<service>-<pid>.json. Use it under the bench:
//   BENCH_ENV_NODE_OPTIONS="--import ./scripts/bench/pg-statements.mjs" BENCH_ENV_PG_STATEMENTS_DIR=/tmp/st npm run bench:pipeline
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const counts = new Map();
try {
  const pg = require('pg');
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (...args) {
    const q = args[0];
    const text = typeof q === 'string' ? q : (q?.text ?? '?');
    const k = text.replace(/\s+/g, ' ').trim().slice(0, 100);
    counts.set(k, (counts.get(k) ?? 0) + 1);
    return original.apply(this, args);
  };
} catch {
  // no pg in this process
}
process.on('exit', () => {
  if (counts.size === 0) return;
  const name = path.basename(path.dirname(path.dirname(process.argv[1] ?? 'node')));
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const dir = process.env.PG_STATEMENTS_DIR;
  if (dir) fs.writeFileSync(path.join(dir, `${name}-${process.pid}.json`), JSON.stringify(sorted, null, 1));
});
