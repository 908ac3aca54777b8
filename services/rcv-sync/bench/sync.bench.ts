/**
 * Documents synchronized per second by one RCV sync (services/rcv-sync's `syncPeriod`): a company
 * with BENCH_DOCS purchases seeded at an in-process SII simulator, read over HTTP through the SII
 * client (login, token cache) and written to a fresh PostgreSQL schema (register rows + inbox
 * rows, one transaction). Round 1 inserts; later rounds are the idempotent re-sync of an open
 * period (same answer, same rows).
 *
 *   set -a; . .stack/endpoints.env; set +a     # or any DATABASE_URL
 *   BENCH_DOCS=2000 BENCH_ROUNDS=3 npx tsx services/rcv-sync/bench/sync.bench.ts
 */
import os from 'node:os';
import { seedOrganization } from '@dte/api';
import { createTestP12, readP12, rutCheckDigit, santiagoDate } from '@dte/engine';
import { syncPeriod, type RcvSource } from '@dte/reception';
import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { startSiiSimulator } from '@dte/sii-simulator';
import { migratedDatabase } from '../../../test/support/env';
import { runMain } from '../../../scripts/bench/run-main';

const DOCS = Number(process.env.BENCH_DOCS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const issuer = (n: number): string => {
  const body = String(96_000_000 + n);
  return `${body}-${rutCheckDigit(body)}`;
};

async function main(): Promise<void> {
  if (!(DOCS > 0 && DOCS <= 20_000 && ROUNDS > 0 && ROUNDS <= 10))
    throw new Error('BENCH_DOCS 1-20000, BENCH_ROUNDS 1-10');
  const db = await migratedDatabase('rcvbench');
  const sim = await startSiiSimulator({ port: 0, autoEnrol: false, cafKeyBits: 512 });
  try {
    const rut = '76086428-5';
    const s = await seedOrganization(db.dataSource, { org: `bench-${Date.now()}`, rut, env: 'cert' });
    const admin = (method: string, path: string, body: unknown) =>
      fetch(`${sim.url}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    await admin('PUT', `/admin/cert/companies/${rut}`, {
      senders: [rut],
      fchResol: '2024-01-01',
      nroResol: 0,
    });
    const today = santiagoDate(new Date());
    for (let i = 1; i <= DOCS; i++) {
      const res = await admin('POST', '/admin/cert/purchases', {
        rutReceptor: rut,
        rutEmisor: issuer(i % 50),
        tipoDte: 33,
        folio: i,
        fchEmis: today,
        mntNeto: 1000 + i,
        mntExe: 0,
        iva: Math.round((1000 + i) * 0.19),
        mntTotal: 1000 + i + Math.round((1000 + i) * 0.19),
      });
      if (res.status !== 201) throw new Error(`seed purchase ${i}: ${res.status} ${await res.text()}`);
    }
    const sii = new SiiClient({ endpoints: simulatorEndpoints(sim.url), timeoutMs: 60_000 });
    const credential = readP12(createTestP12({ rut, password: 'x' }), 'x');
    const source: RcvSource = {
      read: (q) =>
        sii
          .session(credential)
          .readRcv({ env: q.env, rutEmpresa: q.rut, operacion: q.operacion, periodo: q.periodo }),
    };
    const periodo = today.slice(0, 7);
    console.log(
      `rcv sync bench: ${DOCS} purchases (50 issuers) in one period, ${ROUNDS} rounds; ${os.cpus().length} cores; ` +
        `PostgreSQL ${new URL(process.env.DATABASE_URL ?? 'postgres://127.0.0.1:15432').host}, SII simulator in-process`,
    );
    for (let r = 1; r <= ROUNDS; r++) {
      const t0 = process.hrtime.bigint();
      const out = await syncPeriod(db.dataSource, source, { companyId: s.company_id, env: 'cert', periodo });
      const sec = Number(process.hrtime.bigint() - t0) / 1e9;
      if (out.outcome !== 'synced') throw new Error(`round ${r}: ${JSON.stringify(out)}`);
      console.log(
        `round ${r} (${r === 1 ? 'first sync: inserts' : 're-sync: same rows'}): ${out.documents} documents (${out.changed} rows written) in ${sec.toFixed(2)} s = ${(out.documents / sec).toFixed(0)} docs/s`,
      );
    }
  } finally {
    await sim.close();
    await db.cleanup();
  }
}

runMain(main);
