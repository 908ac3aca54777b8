/**
 * CPU of the dte-status projector alone (packages/pipeline/src/projector/projector.ts
 * applyStatusRecords): DOCS documents are issued through the in-process test api (a fresh schema
 * of the local stack, no pipeline), then each gets the four records the workers publish for it
 * (signed, sending with the track id, REC, EPR), applied in batches of BATCH records, phase by
 * phase as they arrive in the pipeline (every document's `signed`, then every `sending`, then REC
 * and EPR together). Prints the CPU milliseconds per document of this process and of the
 * PostgreSQL backends serving it, and the round trips (node-postgres queries) per batch.
 *
 *   npx tsx scripts/bench/projector-cpu.ts        # DOCS=1500 BATCH=40
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { startTestApi } from '../../services/api/test/support/test-api';
import { body, emit, orgWithCafs } from '../../services/api/test/dtes-fixtures';
import { applyStatusRecords, type DteStatusRecord } from '@dte/pipeline';
import { ownBackends } from './process-cpu';
import { runMain } from './run-main';

const DOCS = Number(process.env.DOCS ?? 1500);
const BATCH = Number(process.env.BATCH ?? 40);
const CONCURRENCY = 8;

async function main(): Promise<void> {
  const t = await startTestApi();
  try {
    const o = await orgWithCafs(t, { tipos: [33], hasta: DOCS + 300 });
    const docs: { id: string; folio: number }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < DOCS + 100) {
          const i = next++;
          const r = await emit(t, o, body(33, o.rut, 1000 + i));
          if (r.status !== 202) throw new Error(`POST ${r.status} ${r.text}`);
          docs.push(r.body as { id: string; folio: number });
        }
      }),
    );
    const base = Date.now();
    const rec = (d: { id: string; folio: number }, s: string, at: number, x: Partial<DteStatusRecord>) =>
      ({
        event_id: randomUUID(),
        dte_id: d.id,
        organization_id: o.orgId,
        sii_env: 'cert',
        tipo_dte: 33,
        folio: d.folio,
        sii_status: s,
        sii_glosa: null,
        track_id: null,
        observed_at: new Date(at).toISOString(),
        imported: false,
        source: 'sii-poller',
        ...x,
      }) as DteStatusRecord;
    const phases = (ds: typeof docs) => [
      ds.map((d) => rec(d, 'signed', base + 1, { source: 'signer' })),
      ds.map((d) => rec(d, 'sending', base + 2, { source: 'sii-uploader', track_id: '123456' })),
      ds.flatMap((d) => [
        rec(d, 'REC', base + 3, { track_id: '123456' }),
        rec(d, 'EPR', base + 4, { track_id: '123456', sii_glosa: 'Envio Procesado' }),
      ]),
    ];
    const run = async (ds: typeof docs) => {
      for (const phase of phases(ds))
        for (let i = 0; i < phase.length; i += BATCH)
          await applyStatusRecords(t.db.dataSource, phase.slice(i, i + BATCH));
    };
    // warm-up: 100 documents, so the pool and the JIT are ready
    await run(docs.slice(0, 100));
    const { pids: pgPids, cpuSeconds: pgCpu } = await ownBackends(t.db.dataSource, process.env.DATABASE_URL!);
    // node-postgres queries (round trips) during the measured run
    let queries = 0;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pg = require('pg') as { Client: { prototype: { query: (...a: unknown[]) => unknown } } };
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: unknown, ...a: unknown[]) {
      queries++;
      return original.apply(this, a);
    };
    const c0 = process.cpuUsage();
    const pg0 = pgCpu();
    const t0 = Date.now();
    await run(docs.slice(100));
    const ms = Date.now() - t0;
    const c = process.cpuUsage(c0);
    const pgs = pgCpu() - pg0;
    pg.Client.prototype.query = original;
    const batches = Math.ceil(DOCS / BATCH) * 2 + Math.ceil((2 * DOCS) / BATCH);
    console.log(
      `[projector-cpu] ${DOCS} documents x 4 records, batches of ${BATCH} (${batches} batches) in ${ms} ms; load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    console.log(
      `  CPU per document: this process ${((c.user + c.system) / 1000 / DOCS).toFixed(3)} ms, its PostgreSQL backends (${pgPids.length}) ${((pgs * 1000) / DOCS).toFixed(3)} ms; round trips ${queries} (${(queries / batches).toFixed(2)} per batch, ${(queries / DOCS).toFixed(3)} per document)`,
    );
  } finally {
    await t.close();
  }
}

runMain(main);
