/**
 * Folio allocation throughput: N "replicas" (separate connection pools) each run C concurrent
 * allocators against one (organization, environment, type) until `total` folios are taken, over
 * CAFs of `cafSize` folios. Prints folios/second, latency p50/p99 and whether the folios came
 * out unique and contiguous.
 *
 *   npx tsx services/api/bench/folio-allocator.bench.ts [--replicas 4] [--concurrency 4] [--total 2000] [--caf-size 500]
 */
import { parseArgs } from 'node:util';
import { createDataSource } from '@dte/database';
import type { DataSource } from 'typeorm';
import { migratedDatabase, testStack } from '../../../test/support/env';
import { allocateFolioNow } from '@dte/folios';
import { seedOrganization } from '../src/seed';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      replicas: { type: 'string', default: '4' },
      concurrency: { type: 'string', default: '4' },
      total: { type: 'string', default: '2000' },
      'caf-size': { type: 'string', default: '500' },
    },
  });
  const replicas = Number(values.replicas);
  const concurrency = Number(values.concurrency);
  const total = Number(values.total);
  const cafSize = Number(values['caf-size']);
  const stack = await testStack();
  const db = await migratedDatabase('bench');
  const pools: DataSource[] = [];
  try {
    const s = await seedOrganization(db.dataSource, { org: 'bench', rut: '76086428-5', env: 'cert' });
    for (let desde = 1; desde <= total; desde += cafSize) {
      await db.dataSource.query(
        `INSERT INTO cafs (organization_id, company_id, environment, tipo_dte, rut_emisor, desde, hasta, next_folio,
           fecha_autorizacion, idk, caf_xml, rsa_public_key_pem, rsa_private_key_sealed, source)
         VALUES ($1, $2, 'cert', 33, '76086428-5', $3, $4, $3, current_date, 100, '<CAF/>', 'pem', '{}', 'upload')`,
        [s.organization_id, s.company_id, desde, Math.min(total, desde + cafSize - 1)],
      );
    }
    for (let i = 0; i < replicas; i++) {
      pools.push(
        await createDataSource({
          url: stack.databaseUrl,
          schema: db.schema,
          poolSize: concurrency,
        }).initialize(),
      );
    }
    const key = {
      organizationId: s.organization_id,
      companyId: s.company_id,
      environment: 'cert' as const,
      tipoDte: 33,
    };
    const folios: number[] = [];
    const latencies: number[] = [];
    let remaining = total;
    const worker = async (pool: DataSource) => {
      while (remaining > 0) {
        remaining -= 1;
        const t0 = process.hrtime.bigint();
        const { folio } = await allocateFolioNow(pool, key, new Date());
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        folios.push(folio);
      }
    };
    const start = Date.now();
    await Promise.all(pools.flatMap((p) => Array.from({ length: concurrency }, () => worker(p))));
    const secs = (Date.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const sorted = [...folios].sort((a, b) => a - b);
    const contiguous = sorted.every((f, i) => f === i + 1);
    console.log(
      JSON.stringify({
        replicas,
        concurrency,
        total,
        cafSize,
        seconds: Number(secs.toFixed(2)),
        foliosPerSecond: Math.round(total / secs),
        p50ms: Number(latencies[Math.floor(latencies.length * 0.5)].toFixed(1)),
        p99ms: Number(latencies[Math.floor(latencies.length * 0.99)].toFixed(1)),
        uniqueAndContiguous: contiguous && sorted.length === total,
      }),
    );
  } finally {
    await Promise.all(pools.map((p) => p.destroy()));
    await db.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
