/**
 * Documents built, stamped and signed per second on one core, beside the same run's
 * `openssl speed` RSA figures. Each document costs one RSA-1024 signature (the TED, with the
 * CAF key) and one RSA-2048 signature (the XML signature, with the certificate key), so
 * 1 / (1/sign2048 + 1/sign1024) documents per second is the ceiling.
 *
 *   npm run bench -w @dte/engine            (BENCH_SECONDS=5 by default)
 */
import { execFileSync } from 'node:child_process';

import {
  DteDocument,
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  stampAndSignDte,
} from '../src';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const EMISOR = '76192083-9';

function document(folio: number, fchEmis: string): DteDocument {
  return {
    Encabezado: {
      IdDoc: { TipoDTE: 33, Folio: folio, FchEmis: fchEmis, FmaPago: 1 },
      Emisor: {
        RUTEmisor: EMISOR,
        RznSoc: 'Comercial Ñandú Limitada',
        GiroEmis: 'Venta de artículos de computación',
        Acteco: [474100],
        DirOrigen: 'Teatinos 120',
        CmnaOrigen: 'Santiago',
      },
      Receptor: {
        RUTRecep: '77777777-7',
        RznSocRecep: 'Cliente S.A.',
        GiroRecep: 'Comercio',
        DirRecep: 'San Diego 2222',
        CmnaRecep: 'Santiago',
      },
      Totales: { MntNeto: 100000, TasaIVA: 19, IVA: 19000, MntTotal: 119000 },
    },
    Detalle: [
      { NroLinDet: 1, NmbItem: 'Parlantes Multimedia 180W.', QtyItem: 20, PrcItem: 4500, MontoItem: 90000 },
      { NroLinDet: 2, NmbItem: 'Mouse Inalámbrico', QtyItem: 2, PrcItem: 5000, MontoItem: 10000 },
    ],
  };
}

/**
 * `openssl speed` divides by the process's user CPU time; with `-elapsed`, by wall-clock time.
 * On a loaded machine the two differ a lot, so both are measured and compared like with like.
 */
function opensslSpeed(elapsed: boolean): { rsa2048: number; rsa1024: number } {
  const args = ['speed', ...(elapsed ? ['-elapsed'] : []), '-seconds', '3', 'rsa2048', 'rsa1024'];
  const out = execFileSync('openssl', args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const signPerSec = (bits: number): number => {
    const line = out.split('\n').find((l) => new RegExp(`^rsa\\s+${bits}\\s+bits`).test(l));
    const cols = line?.trim().split(/\s+/) ?? [];
    // "rsa 2048 bits 0.000652s 0.000019s 1533.6 52084.2": sign/s is the 6th column
    const v = Number(cols[5]);
    if (!v) throw new Error(`cannot read openssl speed for rsa${bits}:\n${out}`);
    return v;
  };
  return { rsa2048: signPerSec(2048), rsa1024: signPerSec(1024) };
}

function main(): void {
  const now = new Date();
  const fch = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(now);
  const sii = createTestSiiKey();
  const caf = parseCaf(
    createTestCaf({
      siiKey: sii,
      rutEmisor: EMISOR,
      razonSocial: 'COMERCIAL NANDU',
      tipoDte: 33,
      desde: 1,
      hasta: 10_000_000,
      fechaAutorizacion: fch,
    }),
  );
  const credential = readP12(createTestP12({ rut: '12345678-5', password: 'x' }), 'x');

  // warm-up (key objects, JIT)
  for (let i = 1; i <= 50; i++) stampAndSignDte(document(i, fch), { caf, credential, timestamp: now });

  let n = 0;
  const signed: string[] = [];
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(SECONDS * 1e9);
  while (process.hrtime.bigint() < deadline) {
    const dte = stampAndSignDte(document(1000 + n, fch), { caf, credential, timestamp: now });
    if (signed.length < 500) signed.push(dte);
    n++;
  }
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = cpu.user / 1e6;
  const docsPerSec = n / elapsed;
  const docsPerCpuSec = n / cpuSeconds;

  const envStart = process.hrtime.bigint();
  const envio = buildEnvioDte(signed, {
    rutEmisor: EMISOR,
    rutEnvia: '12345678-5',
    fchResol: '2014-08-22',
    nroResol: 0,
    credential,
    timestamp: now,
  });
  const envMs = Number(process.hrtime.bigint() - envStart) / 1e6;

  const speed = opensslSpeed(false);
  const wall = opensslSpeed(true);
  const ceilingOf = (x: { rsa2048: number; rsa1024: number }): number => 1 / (1 / x.rsa2048 + 1 / x.rsa1024);
  const line = (label: string, value: string): void => console.log(`${label.padEnd(48)} ${value}`);
  const pct = (a: number, b: number): string => `${((a / b) * 100).toFixed(1)} %`;
  console.log('-- CPU-time basis (what `openssl speed` reports by default) --');
  line('documents built+stamped+signed', `${n} in ${cpuSeconds.toFixed(2)} s user CPU`);
  line('  per CPU second (one core)', docsPerCpuSec.toFixed(1));
  line('openssl speed -seconds 3 rsa2048 sign/s', speed.rsa2048.toFixed(1));
  line('openssl speed -seconds 3 rsa1024 sign/s', speed.rsa1024.toFixed(1));
  line('ceiling 1/(1/rsa2048 + 1/rsa1024) docs/s', ceilingOf(speed).toFixed(1));
  line('ratio to ceiling', pct(docsPerCpuSec, ceilingOf(speed)));
  console.log('-- wall-clock basis (openssl speed -elapsed) --');
  line('documents per wall second', `${docsPerSec.toFixed(1)} (${n} in ${elapsed.toFixed(2)} s)`);
  line(
    'openssl speed -elapsed rsa2048 / rsa1024 sign/s',
    `${wall.rsa2048.toFixed(1)} / ${wall.rsa1024.toFixed(1)}`,
  );
  line('ceiling docs/s', ceilingOf(wall).toFixed(1));
  line('ratio to ceiling', pct(docsPerSec, ceilingOf(wall)));
  console.log('--');
  line(`EnvioDTE of ${signed.length} DTE (${(envio.length / 1e6).toFixed(2)} MB)`, `${envMs.toFixed(0)} ms`);
}

main();
