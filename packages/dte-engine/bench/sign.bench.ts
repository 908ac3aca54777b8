/**
 * Documents built, stamped and signed per second on one core, beside the same run's
 * `openssl speed` RSA figures. Each document costs one RSA-1024 signature (the TED, with the
 * CAF key) and one RSA-2048 signature (the XML signature, with the certificate key), so
 * 1 / (1/sign2048 + 1/sign1024) documents per second is the ceiling.
 *
 *   npm run bench -w @dte/engine            (BENCH_SECONDS=5 by default)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import {
  DteDocument,
  EmisorProfile,
  buildDocument,
  validateEmission,
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  stampAndSignDte,
  verifyEnvioDte,
} from '../src';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const EMISOR = '76192083-9';

/** The example invoice body (two lines, a line discount, a global discount, an exempt line). */
const BODY = JSON.parse(
  readFileSync(path.join(__dirname, '..', 'examples', 'docs', '33-factura.json'), 'utf8'),
) as Record<string, unknown>;

/** Built from the emission body: validateEmission (schema + rules) and buildDocument (totals). */
function document(folio: number, fchEmis: string, emisor: EmisorProfile, now: Date): DteDocument {
  const input = validateEmission({ ...BODY, fecha_emision: fchEmis }, { now, emisor });
  return buildDocument(input, { emisor, folio });
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
  const emisor: EmisorProfile = {
    rut: EMISOR,
    razonSocial: 'Comercial Ñandú Limitada',
    giro: 'Venta de artículos de computación',
    acteco: [474100],
    direccion: 'Teatinos 120',
    comuna: 'Santiago',
    ciudad: 'Santiago',
  };

  // warm-up (key objects, JIT)
  for (let i = 1; i <= 50; i++)
    stampAndSignDte(document(i, fch, emisor, now), { caf, credential, timestamp: now });

  const signed: string[] = [];
  /** Runs `make` for SECONDS; documents per wall second and per user-CPU second. */
  const measure = (make: (i: number) => string): { n: number; wall: number; cpu: number } => {
    let n = 0;
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    const deadline = start + BigInt(SECONDS * 1e9);
    while (process.hrtime.bigint() < deadline) {
      const dte = make(n);
      if (signed.length < 500) signed.push(dte);
      n++;
    }
    const wallSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    return { n, wall: wallSeconds, cpu: process.cpuUsage(cpuStart).user / 1e6 };
  };
  const full = measure((i) =>
    stampAndSignDte(document(1000 + i, fch, emisor, now), { caf, credential, timestamp: now }),
  );
  // the XML side alone: one document built beforehand, only its folio changes
  const prebuilt = document(1, fch, emisor, now);
  const xmlOnly = measure((i) =>
    stampAndSignDte(
      {
        ...prebuilt,
        Encabezado: { ...prebuilt.Encabezado, IdDoc: { ...prebuilt.Encabezado.IdDoc, Folio: 100000 + i } },
      },
      { caf, credential, timestamp: now },
    ),
  );

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
  const verifyStart = process.hrtime.bigint();
  const verified = verifyEnvioDte(envio);
  const verifyMs = Number(process.hrtime.bigint() - verifyStart) / 1e6;
  if (!verified.envelopeSignature.valid || !verified.documents.every((d) => d.signatureValid && d.tedValid)) {
    throw new Error('the benchmark envelope does not verify');
  }

  const speed = opensslSpeed(false);
  const wall = opensslSpeed(true);
  const ceilingOf = (x: { rsa2048: number; rsa1024: number }): number => 1 / (1 / x.rsa2048 + 1 / x.rsa1024);
  const line = (label: string, value: string): void => console.log(`${label.padEnd(48)} ${value}`);
  const pct = (a: number, b: number): string => `${((a / b) * 100).toFixed(1)} %`;
  const cpuCeiling = ceilingOf(speed);
  const wallCeiling = ceilingOf(wall);
  console.log('openssl speed (default: per user-CPU second) and with -elapsed (per wall second):');
  line('  rsa2048 sign/s', `${speed.rsa2048.toFixed(1)} CPU, ${wall.rsa2048.toFixed(1)} wall`);
  line('  rsa1024 sign/s', `${speed.rsa1024.toFixed(1)} CPU, ${wall.rsa1024.toFixed(1)} wall`);
  line(
    '  ceiling 1/(1/rsa2048 + 1/rsa1024) docs/s',
    `${cpuCeiling.toFixed(1)} CPU, ${wallCeiling.toFixed(1)} wall`,
  );
  for (const [label, r] of [
    ['body -> validateEmission -> buildDocument -> stamp -> sign', full],
    ['stamp -> sign of a built DteDocument (XML side only)', xmlOnly],
  ] as const) {
    console.log(label);
    line('  documents', `${r.n} in ${r.wall.toFixed(2)} s wall, ${r.cpu.toFixed(2)} s user CPU`);
    line(
      '  per user-CPU second (one core)',
      `${(r.n / r.cpu).toFixed(1)}  = ${pct(r.n / r.cpu, cpuCeiling)} of ceiling`,
    );
    line('  per wall second', `${(r.n / r.wall).toFixed(1)}  = ${pct(r.n / r.wall, wallCeiling)} of ceiling`);
  }
  console.log('--');
  line(
    `buildEnvioDte of ${signed.length} DTE (${(envio.length / 1e6).toFixed(2)} MB)`,
    `${envMs.toFixed(0)} ms`,
  );
  line(`verifyEnvioDte of the same`, `${verifyMs.toFixed(0)} ms`);
}

main();
