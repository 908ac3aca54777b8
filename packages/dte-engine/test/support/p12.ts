import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import forge from 'node-forge';

/**
 * .p12 files made by other means than the engine's fixture maker: with the openssl CLI
 * (modern AES or -legacy RC2-40/3DES), and a hand-assembled PKCS#12 holding two keys.
 */
export function opensslP12(opts: {
  keyPem: string;
  certPem: string;
  password: string;
  legacy?: boolean;
  extraCertsPem?: string;
  /** only the key, no certificate */
  noCerts?: boolean;
}): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'dte-p12-'));
  try {
    writeFileSync(path.join(dir, 'key.pem'), opts.keyPem);
    writeFileSync(path.join(dir, 'cert.pem'), opts.certPem);
    const args = ['pkcs12', '-export', '-inkey', 'key.pem', '-in', 'cert.pem', '-out', 'out.p12'];
    args.push('-passout', `pass:${opts.password}`);
    if (opts.legacy) args.push('-legacy');
    if (opts.noCerts) args.push('-nocerts');
    if (opts.extraCertsPem) {
      writeFileSync(path.join(dir, 'extra.pem'), opts.extraCertsPem);
      args.push('-certfile', 'extra.pem');
    }
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    return readFileSync(path.join(dir, 'out.p12'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A self-signed certificate made by openssl (subject as given, no SAN) and its key. */
export function opensslSelfSigned(subject: string): { keyPem: string; certPem: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'dte-cert-'));
  try {
    execFileSync(
      'openssl',
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
        '-subj',
        subject,
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    return {
      keyPem: readFileSync(path.join(dir, 'k.pem'), 'utf8'),
      certPem: readFileSync(path.join(dir, 'c.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** openssl's own reading of a .p12: the certificate it finds, as PEM. */
export function opensslP12Certificate(p12: Buffer, password: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'dte-p12r-'));
  try {
    writeFileSync(path.join(dir, 'in.p12'), p12);
    return execFileSync(
      'openssl',
      ['pkcs12', '-in', 'in.p12', '-nokeys', '-clcerts', '-passin', `pass:${password}`],
      {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function opensslFingerprint256(certPem: string): string {
  const out = execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], {
    input: certPem,
    encoding: 'utf8',
  });
  return (out.split('=')[1] as string).trim().replace(/:/g, '').toLowerCase();
}

/**
 * A PKCS#12 whose bags are those of the given files put together (for example a stray key
 * beside the real key and certificate), with a fresh SHA-1 MAC under `password`.
 */
export function mergeP12(parts: Buffer[], password: string): Buffer {
  const asn1 = forge.asn1;
  const contentInfos: forge.asn1.Asn1[] = [];
  for (const part of parts) {
    const pfx = asn1.fromDer(forge.util.createBuffer(part.toString('binary')));
    const authSafeOctets = ((pfx.value as forge.asn1.Asn1[])[1]?.value as forge.asn1.Asn1[])[1]
      ?.value as forge.asn1.Asn1[];
    const authSafe = asn1.fromDer(authSafeOctets[0]?.value as string);
    contentInfos.push(...(authSafe.value as forge.asn1.Asn1[]));
  }
  const safe = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, contentInfos);
  const safeDer = asn1.toDer(safe).getBytes();
  const salt = forge.random.getBytesSync(8);
  const count = 2048;
  const key = forge.pkcs12.generateKey(password, forge.util.createBuffer(salt), 3, count, 20);
  const hmac = forge.hmac.create();
  hmac.start('sha1', key);
  hmac.update(safeDer);
  const macData = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
        asn1.create(
          asn1.Class.UNIVERSAL,
          asn1.Type.OID,
          false,
          asn1.oidToDer(forge.pki.oids.sha1 as string).getBytes(),
        ),
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''),
      ]),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, hmac.digest().getBytes()),
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, salt),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(count).getBytes()),
  ]);
  const pfx = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(3).getBytes()),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(
        asn1.Class.UNIVERSAL,
        asn1.Type.OID,
        false,
        asn1.oidToDer(forge.pki.oids.data as string).getBytes(),
      ),
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, safeDer),
      ]),
    ]),
    macData,
  ]);
  return Buffer.from(asn1.toDer(pfx).getBytes(), 'binary');
}
