import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { certificateAad } from '../src/aad';
import { LocalKeyWrapper, seal, type KeyWrapper, KmsUnavailableError } from '../src/envelope';
import { StoredCredentials, UnusableCertificateError } from '../src/stored-credentials';

/** A .p12 made by the openssl CLI (an independent maker), with a RUT in the subject. */
function opensslP12(password: string): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'secrets-p12-'));
  try {
    const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    run(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'k.pem',
        '-out',
        'c.pem',
        '-days',
        '30',
      ].concat(['-subj', '/CN=Prueba/serialNumber=11111111-1']),
    );
    run([
      'pkcs12',
      '-export',
      '-inkey',
      'k.pem',
      '-in',
      'c.pem',
      '-out',
      'out.p12',
      '-passout',
      `pass:${password}`,
    ]);
    return readFileSync(path.join(dir, 'out.p12'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('secrets StoredCredentials', () => {
  const keys = new LocalKeyWrapper({ k1: randomBytes(32) }, 'k1');
  const id = randomUUID();
  let row: { id: string; p12_sealed: unknown; password_sealed: unknown };
  let queries: unknown[][];
  const db = {
    query: async (sql: string, params?: unknown[]) => {
      expect(sql).to.contain('FROM certificates WHERE id = $1');
      // count the opens (the row's sealed material), not the liveness check of a hit
      if (sql.includes('p12_sealed')) queries.push(params ?? []);
      return params?.[0] === row.id ? [row] : [];
    },
  };

  before(async () => {
    const p12 = opensslP12('clave secreta');
    row = {
      id,
      p12_sealed: await seal(keys, p12, certificateAad(id, 'p12')),
      password_sealed: await seal(keys, Buffer.from('clave secreta'), certificateAad(id, 'password')),
    };
  });
  beforeEach(() => {
    queries = [];
  });

  it('opens a stored certificate once and reuses it (checking it still lives) until the TTL has passed', async () => {
    let now = 1_000_000;
    const store = new StoredCredentials({ db, keys, now: () => now, ttlMs: 1000 });
    const first = await store.get(id);
    expect(first.info.rut).to.equal('11111111-1');
    now += 999;
    expect(await store.get(id)).to.equal(first);
    expect(queries).to.have.length(1);
    now += 1;
    const again = await store.get(id);
    expect(queries).to.have.length(2);
    expect(again.info.rut).to.equal('11111111-1');
  });

  it('a missing certificate or one sealed under other names is unusable, with the reason', async () => {
    const store = new StoredCredentials({ db, keys, now: () => 0 });
    const missing = randomUUID();
    const err1 = await store.get(missing).catch((e: unknown) => e);
    expect(err1).to.be.instanceOf(UnusableCertificateError);
    expect((err1 as Error).message).to.equal(`certificate ${missing} does not exist`);

    const other = randomUUID();
    const moved = new StoredCredentials({
      db: { query: async () => [{ ...row, id: other }] },
      keys,
      now: () => 0,
    });
    const err2 = await moved.get(other).catch((e: unknown) => e);
    expect(err2).to.be.instanceOf(UnusableCertificateError);
    expect((err2 as Error).message).to.match(/^the stored certificate cannot be decrypted: /);
  });

  it('a KMS outage passes through as KmsUnavailableError (not an unusable certificate)', async () => {
    const down: KeyWrapper = {
      wrap: (dataKey, aad) => keys.wrap(dataKey, aad),
      unwrap: async () => {
        throw new KmsUnavailableError('kms down');
      },
    };
    const store = new StoredCredentials({ db, keys: down, now: () => 0 });
    const err = await store.get(id).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(KmsUnavailableError);
  });
});
