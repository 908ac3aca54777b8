/**
 * How long the simulator takes to judge an upload: EnvioDTEs of 1, 10 and 50 invoices (CAF keys
 * 1024-bit, as granted by default), timed from the POST to the RECEPCIONDTE answer (the checks
 * run before STATUS 0 is answered). Run: npx tsx packages/sii-simulator/bench/upload.bench.ts
 */
import { performance } from 'node:perf_hooks';
import { estUp, upload } from '../test/support/client';
import { COMPANY, envelope, factura, SENDER, signDte, World } from '../test/support/world';

async function main(): Promise<void> {
  const w = await World.start({ cafKeyBits: 1024 });
  await w.enrol('cert');
  const token = await w.login('cert');
  const caf = await w.grantCaf('cert', 33, 1000);
  let folio = 0;
  for (const size of [1, 10, 50]) {
    const runs = 3;
    const times: number[] = [];
    for (let r = 0; r < runs; r++) {
      const dtes = Array.from({ length: size }, () => signDte(factura(++folio), caf));
      const file = envelope(dtes);
      const t0 = performance.now();
      const up = await upload(w.base('cert'), { token, sender: SENDER, company: COMPANY, file });
      times.push(performance.now() - t0);
      const st = await estUp(w.base('cert'), COMPANY, up.trackId!, token);
      if (st.estado !== 'EPR' || st.aceptados[0] !== size) throw new Error(`unexpected verdict ${st.estado}`);
    }
    times.sort((a, b) => a - b);
    console.log(
      `EnvioDTE with ${String(size).padStart(2)} DTE (${runs} runs): median ${times[1].toFixed(0)} ms, ` +
        `${(times[1] / size).toFixed(1)} ms per DTE`,
    );
  }
  await w.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
