/**
 * How long a password costs: hashPassword and verifyPassword (scrypt with the parameters the
 * accounts package uses), each run N times one after another, on this machine. Prints the
 * parameters, the machine's load average and the mean / min / max of each.
 *
 *   npx tsx packages/accounts/bench/password.bench.ts [runs=5]
 */
import os from 'node:os';
import { hashPassword, verifyPassword } from '../src/password';

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5);
  const stats = (xs: number[]) =>
    `mean ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}`;
  const hashes: number[] = [];
  const verifies: number[] = [];
  let stored = '';
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    stored = await hashPassword(`contraseña-de-prueba-${i}`);
    hashes.push(performance.now() - t);
    t = performance.now();
    if (!(await verifyPassword(`contraseña-de-prueba-${i}`, stored))) throw new Error('verify failed');
    verifies.push(performance.now() - t);
  }
  const [, n, r, p] = stored.split('$');
  console.log(
    `scrypt N=${n} r=${r} p=${p}, ${runs} runs, node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`hashPassword:   ${stats(hashes)}`);
  console.log(`verifyPassword: ${stats(verifies)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
