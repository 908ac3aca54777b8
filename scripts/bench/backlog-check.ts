/**
 * The cost of the backpressure check of POST /dtes (packages/emission/src/backlog-gate.ts): the
 * bounded count of the company's unsent documents over the partial index dtes_unsent_idx, timed
 * at several backlog sizes (documents queued without a track id, copies of one real document
 * inserted by SQL) on a fresh schema of the local stack, with EXPLAIN's plan and buffers.
 *
 *   npx tsx scripts/bench/backlog-check.ts     # BACKLOGS=0,100,1000,10000 LIMIT=10001 ROUNDS=300 SENT=50000
 */
import { loadavg } from 'node:os';
import { startTestApi } from '../../services/api/test/support/test-api';
import { body, emit, orgWithCafs } from '../../services/api/test/dtes-fixtures';
import { countUnsent } from '@dte/emission';
import { runMain } from './run-main';

const BACKLOGS = (process.env.BACKLOGS ?? '0,100,1000,10000').split(',').map(Number);
const LIMIT = Number(process.env.LIMIT ?? 10001);
const ROUNDS = Number(process.env.ROUNDS ?? 300);
const SENT = Number(process.env.SENT ?? 50000);

async function main(): Promise<void> {
  const t = await startTestApi({ env: { EMISSION_BACKLOG_MAX: '0' } });
  const db = t.db.dataSource;
  try {
    const o = await orgWithCafs(t, { tipos: [33], hasta: 10 });
    const first = await emit(t, o, body(33, o.rut));
    if (first.status !== 202) throw new Error(`POST ${first.status} ${first.text}`);
    // the one real document counts as sent (track id) so the copies make the whole backlog
    await db.query(`UPDATE dtes SET track_id = 'x', sii_status = 'EPR' WHERE id = $1`, [first.body.id]);
    // a company's table holds mostly sent documents: SENT copies with a track id (not in the index)
    await db.query(
      `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
          rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
          monto_total, input, document, sii_status, track_id, observed_at, idempotency_key, body_hash, created_at)
       SELECT gen_random_uuid(), organization_id, company_id, sii_env, tipo_dte, 2000000 + g, caf_id,
          certificate_id, rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto,
          monto_exento, iva, monto_total, input, document, 'EPR', 't', observed_at, 'sent-' || g, body_hash, now()
         FROM dtes, generate_series(1, $2::int) g WHERE id = $1`,
      [first.body.id, SENT],
    );
    const scope = { companyId: o.companyId, environment: 'cert' as const };
    console.log(
      `[backlog-check] bounded count (LIMIT ${LIMIT}) of one company's unsent documents among ${SENT} sent, ${ROUNDS} rounds per size, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    let have = 0;
    for (const size of BACKLOGS) {
      if (size > have) {
        await db.query(
          `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
              rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
              monto_total, input, document, sii_status, observed_at, idempotency_key, body_hash, created_at)
           SELECT gen_random_uuid(), organization_id, company_id, sii_env, tipo_dte, 1000000 + g, caf_id,
              certificate_id, rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto,
              monto_exento, iva, monto_total, input, document, 'queued', observed_at, 'bench-' || g, body_hash, now()
             FROM dtes, generate_series($2::int, $3::int - 1) g WHERE id = $1`,
          [first.body.id, have, size],
        );
        await db.query('ANALYZE dtes');
        have = size;
      }
      for (let i = 0; i < 20; i++) await countUnsent(db, scope, LIMIT); // warm
      const times: number[] = [];
      let n = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = process.hrtime.bigint();
        n = await countUnsent(db, scope, LIMIT);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      times.sort((a, b) => a - b);
      const plan: { 'QUERY PLAN': string }[] = await db.query(
        `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) SELECT count(*)::int AS n FROM (
           SELECT 1 FROM dtes WHERE company_id = $1 AND sii_env = $2 AND track_id IS NULL
              AND sii_status IN ('queued', 'signed') LIMIT $3) s`,
        [scope.companyId, scope.environment, LIMIT],
      );
      const lines = plan.map((r) => r['QUERY PLAN']);
      const scan = lines.find((l) => /Scan/.test(l))?.trim() ?? '?';
      const buffers = lines.find((l) => /Buffers/.test(l))?.trim() ?? '';
      const exec = lines.find((l) => /Execution Time/.test(l))?.trim() ?? '';
      console.log(
        `  backlog ${String(size).padStart(6)} (counted ${n}): round trip p50 ${times[Math.floor(ROUNDS / 2)].toFixed(3)} ms, p99 ${times[Math.floor(ROUNDS * 0.99)].toFixed(3)} ms; ${exec}; ${buffers}; ${scan.slice(0, 70)}`,
      );
    }
  } finally {
    await t.close();
  }
}

runMain(main);
