/**
 * The machine's speed at one moment, as CPU time per RSA-2048 SHA-1 signature (the signer's own
 * operation): the shared 2-core VM runs some minutes up to a third slower than others, and the
 * figures of two runs compare only next to this. Median of `rounds` rounds of `n` signatures,
 * CPU time of this process (process.cpuUsage), so other processes' load does not count in it
 * unless they slow the core itself.
 */
import { generateKeyPairSync, sign } from 'node:crypto';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const data = Buffer.alloc(512, 7);

export function rsaSignatureMs(n = 200, rounds = 3): number {
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) sign('sha1', data, privateKey);
    const u = process.cpuUsage(t0);
    perRound.push((u.user + u.system) / 1000 / n);
  }
  perRound.sort((a, b) => a - b);
  return perRound[Math.floor(perRound.length / 2)]!;
}
