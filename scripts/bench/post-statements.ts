/**
 * Counts the SQL statements (and round trips) one POST /dtes costs, by wrapping the pg driver's
 * Client.query in an in-process api (the test api on a fresh schema of the local stack), and
 * prints them grouped by their first words, per POST. No relay or projector runs here: this is
 * the HTTP path alone.
 *
 *   npx tsx scripts/bench/post-statements.ts        # POSTS (50) documents of type 33
 *   POST_PATH=boletas npx tsx scripts/bench/post-statements.ts   # POST /boletas, type 39
 */
import { randomUUID } from 'node:crypto';
import { call, startTestApi, type Answer, type TestApi } from '../../services/api/test/support/test-api';
import { body, boletaBody, emit, orgWithCafs, type DteOrg } from '../../services/api/test/dtes-fixtures';
import { runMain } from './run-main';

const POSTS = Number(process.env.POSTS ?? 50);
const BOLETAS = process.env.POST_PATH === 'boletas';
const TIPO = BOLETAS ? 39 : 33;

/** one emission of the measured path, `i` varying the amount */
function post(t: TestApi, o: DteOrg, i: number): Promise<Answer> {
  if (!BOLETAS) return emit(t, o, body(33, o.rut, 1000 + i));
  return call(t.url, 'POST', '/boletas', {
    key: o.key,
    headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': o.certId },
    json: boletaBody(o.rut, 1000 + i),
  });
}

async function main(): Promise<void> {
  const t = await startTestApi(BOLETAS ? { env: { BOLETAS_ENABLED: 'cert' } } : {});
  try {
    const o = await orgWithCafs(t, { tipos: [TIPO], hasta: POSTS + 10 });
    await post(t, o, 0); // warm-up: caches
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
      const r = await post(t, o, i + 1);
      if (r.status !== 202) throw new Error(`POST ${r.status} ${r.text}`);
    }
    counting = false;
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.log(
      `[post-statements] ${POSTS} POST /${BOLETAS ? 'boletas' : 'dtes'} (type ${TIPO}, Idempotency-Key), in-process api, no pipeline`,
    );
    console.log(`  statements per POST: ${(total / POSTS).toFixed(1)}`);
    for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]))
      console.log(`  ${(v / POSTS).toFixed(2).padStart(5)}  ${k}`);
  } finally {
    await t.close();
  }
}

runMain(main);
