/**
 * Counts the SQL statements (and round trips) one POST /dtes costs, by wrapping the pg driver's
 * Client.query in an in-process api (the test api on a fresh schema of the local stack), and
 * prints them grouped by their first words, per POST. No relay or projector runs here: this is
 * the HTTP path alone.
 *
 *   npx tsx scripts/bench/post-statements.ts        # POSTS (50) documents of type 33
 */
import { startTestApi } from '../../services/api/test/support/test-api';
import { body, emit, orgWithCafs } from '../../services/api/test/dtes-fixtures';

const POSTS = Number(process.env.POSTS ?? 50);

async function main(): Promise<void> {
  const t = await startTestApi();
  try {
    const o = await orgWithCafs(t, { tipos: [33], hasta: POSTS + 10 });
    await emit(t, o, body(33, o.rut)); // warm-up: caches
    const counts = new Map<string, number>();
    let counting = false;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pg = require('pg') as { Client: { prototype: { query: (...a: unknown[]) => unknown } } };
    const proto = pg.Client.prototype;
    const original = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      if (counting) {
        const q = args[0];
        const text = typeof q === 'string' ? q : ((q as { text?: string })?.text ?? '?');
        const k = text.replace(/\s+/g, ' ').trim().slice(0, 90);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      return original.apply(this, args);
    };
    counting = true;
    for (let i = 0; i < POSTS; i++) {
      const r = await emit(t, o, body(33, o.rut, 1000 + i));
      if (r.status !== 202) throw new Error(`POST ${r.status} ${r.text}`);
    }
    counting = false;
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.log(
      `[post-statements] ${POSTS} POST /dtes (type 33, Idempotency-Key), in-process api, no pipeline`,
    );
    console.log(`  statements per POST: ${(total / POSTS).toFixed(1)}`);
    for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]))
      console.log(`  ${(v / POSTS).toFixed(2).padStart(5)}  ${k}`);
  } finally {
    await t.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
