/**
 * Printed forms rendered per second on one core (this process is single-threaded): signed
 * documents of every type the engine signs (33, 34, 46, 52, 56, 61, 110, 111, 112) are rendered
 * in turn from their signed XML (parse, PDF417 encoding of the TED, pdfkit layout, PDF bytes), for
 * BENCH_SECONDS per layout. One rendered page of each layout is decoded afterwards with zxing
 * (not timed), so a fast but unreadable timbre cannot pass unnoticed.
 *
 *   npm run bench -w @dte/printed-form       (BENCH_SECONDS=5 by default; keep it under 2 minutes)
 */
import os from 'node:os';
import { stampAndSignDte, type TipoDte } from '@dte/engine';
import { cafFor, testCredentials, today } from '../../dte-engine/test/support/credentials';
import { sampleDocument } from '../../dte-engine/test/support/documents';
import { renderSignedDte, tedOf, type PrintLayout } from '../src';
import { decodePdf417, pdfInfo } from '../test/support/pdf-oracles';

const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? 5), 50);
const TIPOS: TipoDte[] = [33, 34, 46, 52, 56, 61, 110, 111, 112];
const COMPANY = { oficinaSii: 'SANTIAGO CENTRO', resolucion: { numero: 80, fecha: '2014-08-22' } };

async function main() {
  const docs = TIPOS.map((tipo, i) =>
    stampAndSignDte(sampleDocument(tipo, 100 + i, today()), {
      caf: cafFor(tipo).caf,
      credential: testCredentials().credential,
      timestamp: new Date(),
    }),
  );
  console.log(
    `printed-form bench: node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} (${os.cpus().length} cores on the machine, 1 used), ` +
      `${BENCH_SECONDS_TEXT()}, ${docs.length} signed documents (types ${TIPOS.join(', ')}) rendered in turn`,
  );
  for (const layout of ['letter', 'thermal'] as PrintLayout[]) {
    // warm-up: fonts, code paths
    for (const xml of docs) await renderSignedDte(xml, { ...COMPANY, layout });
    let n = 0;
    let bytes = 0;
    let pages = 0;
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const until = Date.now() + SECONDS * 1000;
    let last: Buffer = Buffer.alloc(0);
    while (Date.now() < until) {
      last = await renderSignedDte(docs[n % docs.length], { ...COMPANY, layout });
      bytes += last.length;
      n += 1;
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const cpuSec = (cpu.user + cpu.system) / 1e6;
    pages = pdfInfo(last).pages;
    const check = decodePdf417(last);
    const lastXml = docs[(n - 1) % docs.length];
    const readable = check.length === 1 && check[0].toString('latin1') === tedOf(lastXml);
    console.log(
      `${layout.padEnd(7)}: ${n} PDFs in ${wall.toFixed(1)} s wall, ${cpuSec.toFixed(1)} s CPU -> ` +
        `${(n / wall).toFixed(1)} PDFs/s (${(n / cpuSec).toFixed(1)} per CPU-second), ` +
        `${((wall / n) * 1000).toFixed(1)} ms per PDF, ${Math.round(bytes / n / 1024)} KiB average, ` +
        `${pages} page(s) each; last PDF's timbre decodes to its TED: ${readable ? 'yes' : 'NO'}`,
    );
    if (!readable) process.exitCode = 1;
  }
}

function BENCH_SECONDS_TEXT() {
  return `BENCH_SECONDS=${SECONDS} per layout`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
