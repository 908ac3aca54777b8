import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import forge from 'node-forge';

import { ServiceError } from '@dte/error-catalog';

import { P12_MAX_ITERATIONS, checkP12Iterations, createTestP12, readP12, readP12OffThread } from '../src';
import { opensslSelfSigned } from './support/p12';

/** `openssl pkcs12 -export` of a fresh key and certificate with the given extra options. */
function hostileP12(extra: string[]): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'dte-hostile-'));
  try {
    const { keyPem, certPem } = pair;
    writeFileSync(path.join(dir, 'k.pem'), keyPem);
    writeFileSync(path.join(dir, 'c.pem'), certPem);
    execFileSync(
      'openssl',
      [
        'pkcs12',
        '-export',
        '-inkey',
        'k.pem',
        '-in',
        'c.pem',
        '-out',
        'o.p12',
        '-passout',
        'pass:pw',
        ...extra,
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    return readFileSync(path.join(dir, 'o.p12'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let pair: { keyPem: string; certPem: string };

/** Counts calls of node-forge's key derivations (PKCS#12 KDF and PBKDF2) while `fn` runs. */
function derivations<T>(fn: () => T): { calls: number; result: T | Error } {
  const pkcs12 = forge.pkcs12 as unknown as { generateKey: (...a: unknown[]) => unknown };
  const f = forge as unknown as { pbkdf2: (...a: unknown[]) => unknown };
  const origKdf = pkcs12.generateKey;
  const origPbkdf2 = f.pbkdf2;
  let calls = 0;
  pkcs12.generateKey = (...a) => {
    calls += 1;
    return origKdf.apply(forge.pkcs12, a);
  };
  f.pbkdf2 = (...a) => {
    calls += 1;
    return origPbkdf2.apply(forge, a);
  };
  try {
    return { calls, result: fn() };
  } catch (err) {
    return { calls, result: err as Error };
  } finally {
    pkcs12.generateKey = origKdf;
    f.pbkdf2 = origPbkdf2;
  }
}

describe('hostile .p12 files: iteration counts bounded before any derivation', function () {
  this.timeout(60_000);
  before(() => {
    pair = opensslSelfSigned('/CN=JUAN PEREZ SOTO/serialNumber=12.345.678-5');
  });

  const cases: [string, string[], RegExp][] = [
    ['-iter 2000000 (MAC and PBES2 both)', ['-iter', '2000000'], /2000000 MAC iterations/],
    [
      '-iter 2000000 -legacy (PBES1 3DES key, RC2 certificates)',
      ['-iter', '2000000', '-legacy'],
      /2000000 MAC/,
    ],
    [
      'PBES2 key only (-nomaciter -certpbe NONE)',
      ['-iter', '2000000', '-nomaciter', '-certpbe', 'NONE'],
      /2000000 key-encryption/,
    ],
    [
      'PBES1 key only (-legacy -nomaciter -certpbe NONE)',
      ['-legacy', '-iter', '2000000', '-nomaciter', '-certpbe', 'NONE'],
      /2000000 key-encryption/,
    ],
    ['PBES2 certificates only, no MAC (-nomac)', ['-iter', '2000000', '-nomac'], /2000000 key-encryption/],
  ];

  for (const [name, extra, reason] of cases) {
    it(`refuses ${name} with cert.invalid and the reason, running no derivation`, async () => {
      const p12 = hostileP12(extra);
      const started = process.hrtime.bigint();
      const { calls, result } = derivations(() => readP12(p12, 'pw'));
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      expect(result).to.be.instanceOf(ServiceError);
      expect((result as ServiceError).code).to.equal('cert.invalid');
      expect((result as Error).message).to.match(reason);
      expect((result as Error).message).to.contain(`at most ${P12_MAX_ITERATIONS}`);
      expect(calls, 'key derivations run').to.equal(0);
      // node-forge would spend ~24 s on such a file; refused from its structure alone
      expect(ms).to.be.lessThan(1000);
      const off = await readP12OffThread(p12, 'pw').catch((e: unknown) => e);
      expect((off as ServiceError).code).to.equal('cert.invalid');
      expect((off as Error).message).to.match(reason);
    });
  }

  it('refuses a huge MAC count alone (-maciter 2000000 on a modern file, PKCS#12 KDF)', () => {
    // openssl 3 takes the MAC count from -iter when -maciter is given; make the key cheap with
    // -certpbe NONE so the MAC is the only large count
    const p12 = hostileP12(['-iter', '2000000', '-maciter', '-keypbe', 'NONE', '-certpbe', 'NONE']);
    const { calls, result } = derivations(() => readP12(p12, 'pw'));
    expect((result as ServiceError).code).to.equal('cert.invalid');
    expect((result as Error).message).to.match(/2000000 MAC iterations/);
    expect(calls).to.equal(0);
  });

  it('accepts what real certificates use: openssl defaults (2048), -legacy, and the fixture maker', async () => {
    for (const p12 of [
      hostileP12([]),
      hostileP12(['-legacy']),
      hostileP12(['-iter', String(P12_MAX_ITERATIONS)]),
    ]) {
      expect(checkP12Iterations(p12, 'pw')).to.be.at.most(P12_MAX_ITERATIONS);
      expect((await readP12OffThread(p12, 'pw')).info.rut).to.equal('12345678-5');
    }
    const fixture = createTestP12({ rut: '11111111-1', password: 'x', legacy: true });
    expect(checkP12Iterations(fixture, 'x')).to.equal(2048);
    expect((await readP12OffThread(fixture, 'x')).info.rut).to.equal('11111111-1');
  });

  it('opens off the event loop: timers keep firing while certificates open, and a hard time limit refuses', async () => {
    const p12 = hostileP12([]);
    await readP12OffThread(p12, 'pw'); // worker started
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    const opened = await Promise.all(Array.from({ length: 8 }, () => readP12OffThread(p12, 'pw')));
    clearInterval(timer);
    expect(opened.map((c) => c.info.rut)).to.deep.equal(Array(8).fill('12345678-5'));
    expect(ticks, 'event-loop ticks during 8 opens').to.be.greaterThan(8);

    const late = await readP12OffThread(p12, 'pw', { timeoutMs: 1 }).catch((e: unknown) => e);
    expect((late as ServiceError).code).to.equal('cert.invalid');
    expect((late as Error).message).to.match(/took longer than 1 ms/);
    // the worker was replaced: the next open works
    expect((await readP12OffThread(p12, 'pw')).info.rut).to.equal('12345678-5');
    const wrong = await readP12OffThread(p12, 'nope').catch((e: unknown) => e);
    expect((wrong as ServiceError).code).to.equal('cert.invalid');
  });
});
