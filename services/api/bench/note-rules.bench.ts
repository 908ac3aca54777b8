/**
 * Cost of the note rules (packages/emission/src/note-rules.ts) that every 56/61 over one of our documents pays
 * inside the emission transaction, against a company with many documents: `--docs` documents of
 * one company (a third of them credit notes, each referencing the invoice before it), then
 * `--runs` rule checks of a credit note over a random invoice (each in its own transaction, as
 * emission runs them). Prints p50/p99/max in ms and whether the plan uses the references index
 * (migration 1763803000000); `--no-index` drops it first to compare. Then times 20 GET /dtes/totales
 * computations of the month over those documents.
 *
 *   npx tsx services/api/bench/note-rules.bench.ts [--docs 100000] [--runs 300] [--no-index]
 */
import { parseArgs } from 'node:util';
import { validateEmission } from '@dte/engine';
import { enforceReferenceRules, dteTotales } from '@dte/emission';
import { startTestApi } from '../test/support/test-api';
import { body, emit, orgWithCafs } from '../test/dtes-fixtures';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: '100000' },
      runs: { type: 'string', default: '300' },
      'no-index': { type: 'boolean', default: false },
    },
  });
  const docs = Number(values.docs);
  const runs = Number(values.runs);
  const t = await startTestApi();
  try {
    const db = t.db.dataSource;
    const o = await orgWithCafs(t, { tipos: [33, 61] });
    const first = await emit(t, o, body(33, o.rut));
    if (first.status !== 202) throw new Error(first.text);
    const started = Date.now();
    // clones of the first document: folios 1000.., every third a 61 over the previous folio
    await db.query(
      `INSERT INTO dtes (id, organization_id, company_id, sii_env, tipo_dte, folio, caf_id, certificate_id,
         rut_emisor, rut_receptor, razon_social_receptor, fecha_emision, monto_neto, monto_exento, iva,
         monto_total, input, document, sii_status, idempotency_key, body_hash)
       SELECT gen_random_uuid(), d.organization_id, d.company_id, d.sii_env,
              CASE WHEN g % 3 = 0 THEN 61 ELSE 33 END, 1000 + g, d.caf_id, d.certificate_id, d.rut_emisor,
              d.rut_receptor, d.razon_social_receptor, d.fecha_emision, d.monto_neto, 0, d.iva, d.monto_total,
              CASE WHEN g % 3 = 0 THEN jsonb_build_object('tipo_dte', 61, 'references', jsonb_build_array(
                jsonb_build_object('line_num', 1, 'tipo_doc_ref', 33, 'folio_ref', 999 + g, 'cod_ref', 3)))
                ELSE d.input END,
              '{}'::jsonb, 'EPR', 'bench-' || g, ''
         FROM dtes d, generate_series(1, $2::int - 1) g WHERE d.id = $1`,
      [first.body.id, docs],
    );
    await db.query('ANALYZE dtes');
    const loadMs = Date.now() - started;
    if (values['no-index']) await db.query('DROP INDEX IF EXISTS dtes_input_references_idx');
    const scope = { organizationId: o.orgId, companyId: o.companyId, environment: 'cert' as const };
    const emisor = {
      rut: o.rut,
      razonSocial: 'EMPRESA DE PRUEBA',
      giro: 'Venta de ferretería',
      acteco: [467300],
      direccion: 'Av. Providencia 1234',
      comuna: 'Providencia',
    };
    const times: number[] = [];
    const outcomes: Record<string, number> = {};
    for (let i = 0; i < runs; i++) {
      let folio = 1000 + 1 + Math.floor(Math.random() * (docs - 2));
      if (folio % 3 === 1) folio += 1; // an invoice, not a note (folio % 3 === 0 already has one)
      const note = {
        ...body(61, o.rut, 100),
        nc_reason: 'correccion_monto',
        references: [
          {
            line_num: 1,
            tipo_doc_ref: 33,
            folio_ref: folio,
            fecha_ref: body(33, o.rut).fecha_emision,
            cod_ref: 3,
            razon_ref: 'x',
          },
        ],
      };
      const input = validateEmission(note, { now: new Date(), emisor });
      const t0 = process.hrtime.bigint();
      const code = await db
        .transaction((m) => enforceReferenceRules(m, scope, input, 'emission'))
        .then(() => 'passed')
        .catch((e: { code?: string }) => e.code ?? String(e));
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      outcomes[code] = (outcomes[code] ?? 0) + 1;
    }
    // GET /dtes/totales of the month over the same documents (one GROUPING SETS query)
    const periodo = body(33, o.rut).fecha_emision as string;
    const totalesMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = process.hrtime.bigint();
      const tot = await dteTotales(
        db,
        { organizationId: o.orgId, environment: 'cert', companyId: o.companyId },
        periodo.slice(0, 7),
      );
      totalesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (tot.total.cantidad !== docs)
        throw new Error(`totales counted ${tot.total.cantidad}, expected ${docs}`);
    }
    totalesMs.sort((a, b) => a - b);
    times.sort((a, b) => a - b);
    const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
    const plan: { 'QUERY PLAN': string }[] = await db.query(
      `EXPLAIN SELECT 1 FROM dtes d WHERE d.organization_id = $1 AND d.company_id = $2 AND d.sii_env = 'cert'
         AND d.input->'references' @> '[{"tipo_doc_ref": 33, "folio_ref": 1001}]'`,
      [o.orgId, o.companyId],
    );
    const usesIndex = plan.some((r) => r['QUERY PLAN'].includes('dtes_input_references_idx'));
    console.log(
      JSON.stringify({
        config: { docs, runs, index: !values['no-index'] },
        load_ms: loadMs,
        rule_check_ms: {
          p50: +pct(50).toFixed(2),
          p99: +pct(99).toFixed(2),
          max: +times[times.length - 1].toFixed(2),
        },
        outcomes,
        totales_ms: { p50: +totalesMs[10].toFixed(1), max: +totalesMs[19].toFixed(1) },
        plan_uses_index: usesIndex,
      }),
    );
  } finally {
    await t.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
