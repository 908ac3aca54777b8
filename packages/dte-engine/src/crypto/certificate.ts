import { KeyObject, X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';

import { ServiceError } from '@dte/error-catalog';
import forge from 'node-forge';

import { checkP12Iterations } from './p12-limits';
import { findRut, normalizeRut } from './rut';

/** OID under which Chilean certification authorities put the holder's RUT (SAN otherName). */
export const RUT_OTHER_NAME_OID = '1.3.6.1.4.1.8321.1';

export interface CertificateInfo {
  /** holder's RUT, e.g. 7880442-4 (no leading zeros, upper-case K) */
  rut: string;
  subject: string;
  notBefore: Date;
  notAfter: Date;
  /** lower-case hex, no separators */
  fingerprintSha256: string;
  /** upper-case hex as the certificate carries it */
  serialNumber: string;
}

/** The key and certificate that sign DTEs and envelopes, read from a .p12. */
export interface SigningCredential {
  privateKeyPem: string;
  certificatePem: string;
  info: CertificateInfo;
}

function certInvalid(message: string, cause?: unknown): ServiceError {
  return new ServiceError('cert.invalid', message, cause === undefined ? {} : { cause });
}

export function readCertificate(pem: string): CertificateInfo {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pem);
  } catch (err) {
    throw certInvalid('the certificate is not a readable X.509 certificate', err);
  }
  const subject = x509.subject.split('\n').join(', ');
  const rut = rutFromSan(x509.raw) ?? rutFromSubject(x509.subject);
  if (!rut) {
    throw certInvalid(
      `the certificate carries no RUT (subjectAltName otherName ${RUT_OTHER_NAME_OID}, subject serialNumber or CN)`,
    );
  }
  return {
    rut,
    subject,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    fingerprintSha256: x509.fingerprint256.replace(/:/g, '').toLowerCase(),
    serialNumber: x509.serialNumber.toUpperCase(),
  };
}

/** Reads the RUT from subjectAltName otherName 1.3.6.1.4.1.8321.1 by walking the DER. */
function rutFromSan(der: Buffer): string | null {
  let cert: forge.asn1.Asn1;
  try {
    cert = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  } catch {
    return null;
  }
  const tbs = childAt(cert, 0);
  if (!tbs || !Array.isArray(tbs.value)) return null;
  const extsWrapper = tbs.value.find((n) => n.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && n.type === 3);
  const exts = extsWrapper ? childAt(extsWrapper, 0) : undefined;
  if (!exts || !Array.isArray(exts.value)) return null;
  for (const ext of exts.value) {
    const oid = childAt(ext, 0);
    if (!oid || forge.asn1.derToOid(oid.value as string) !== '2.5.29.17') continue;
    const octets = Array.isArray(ext.value) ? ext.value[ext.value.length - 1] : undefined;
    if (!octets || typeof octets.value !== 'string') continue;
    const names = forge.asn1.fromDer(octets.value);
    for (const name of Array.isArray(names.value) ? names.value : []) {
      if (name.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || name.type !== 0) continue;
      const typeId = childAt(name, 0);
      if (!typeId || forge.asn1.derToOid(typeId.value as string) !== RUT_OTHER_NAME_OID) continue;
      const explicit = childAt(name, 1);
      const str = explicit ? childAt(explicit, 0) : undefined;
      if (str && typeof str.value === 'string') {
        const rut = normalizeRut(forge.util.decodeUtf8(str.value));
        if (rut) return rut;
      }
    }
  }
  return null;
}

function childAt(node: forge.asn1.Asn1, i: number): forge.asn1.Asn1 | undefined {
  return Array.isArray(node.value) ? node.value[i] : undefined;
}

function rutFromSubject(subject: string): string | null {
  for (const line of subject.split('\n')) {
    const [attr, ...rest] = line.split('=');
    const value = rest.join('=');
    if (attr === 'serialNumber') {
      const rut = normalizeRut(value) ?? findRut(value);
      if (rut) return rut;
    }
  }
  const cn = subject.split('\n').find((l) => l.startsWith('CN='));
  return cn ? findRut(cn.slice(3)) : null;
}

/**
 * Reads a .p12 (PKCS#12) with node-forge, which also handles the legacy RC2-40 / 3DES
 * encryption real SII certificates still use. When the file holds several keys and
 * certificates, the pair is chosen by matching public keys; among several pairs the one whose
 * certificate carries a RUT and lasts longest wins. Synchronous (tens of ms of CPU): a server
 * opens certificates with readP12OffThread instead.
 */
export function readP12(p12: Buffer, password: string): SigningCredential {
  // bounded work first: a file asking for millions of derivation iterations is refused unread
  checkP12Iterations(p12, password);
  let parsed: forge.pkcs12.Pkcs12Pfx;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(p12.toString('binary')));
    parsed = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (err) {
    throw certInvalid('the .p12 file cannot be read: wrong password or not a PKCS#12 file', err);
  }
  const keys: KeyObject[] = [];
  for (const bagType of [forge.pki.oids.pkcs8ShroudedKeyBag, forge.pki.oids.keyBag]) {
    for (const bag of parsed.getBags({ bagType })[bagType as string] ?? []) {
      const key = bagToPrivateKey(bag);
      if (key) keys.push(key);
    }
  }
  const certs: string[] = [];
  for (const bag of parsed.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag as string] ??
    []) {
    if (bag.cert) certs.push(forge.pki.certificateToPem(bag.cert));
    else if (bag.asn1) certs.push(derToPem(forge.asn1.toDer(bag.asn1).getBytes()));
  }
  if (keys.length === 0) throw certInvalid('the .p12 file holds no private key');
  if (certs.length === 0) throw certInvalid('the .p12 file holds no certificate');

  const pairs: { key: KeyObject; certPem: string; x509: X509Certificate }[] = [];
  for (const certPem of certs) {
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(certPem);
    } catch {
      continue;
    }
    const spki = x509.publicKey.export({ type: 'spki', format: 'der' });
    const key = keys.find((k) => createPublicKey(k).export({ type: 'spki', format: 'der' }).equals(spki));
    if (key) pairs.push({ key, certPem, x509 });
  }
  if (pairs.length === 0) throw certInvalid('no certificate in the .p12 file matches its private key');
  const scored = pairs.map((p) => {
    let info: CertificateInfo | null = null;
    try {
      info = readCertificate(p.certPem);
    } catch {
      info = null;
    }
    return { ...p, info };
  });
  scored.sort((a, b) => {
    if (!!a.info !== !!b.info) return a.info ? -1 : 1;
    return new Date(b.x509.validTo).getTime() - new Date(a.x509.validTo).getTime();
  });
  const best = scored[0];
  if (!best || !best.info) {
    // readCertificate explains precisely why the certificate is unusable
    readCertificate(pairs[0]?.certPem ?? '');
    throw certInvalid('the certificate carries no RUT');
  }
  if (best.key.asymmetricKeyType !== 'rsa') {
    throw certInvalid(
      `the certificate key is ${best.key.asymmetricKeyType}; the SII signature profile needs RSA`,
    );
  }
  return {
    privateKeyPem: best.key.export({ type: 'pkcs8', format: 'pem' }) as string,
    certificatePem: best.x509.toString(),
    info: best.info,
  };
}

function bagToPrivateKey(bag: forge.pkcs12.Bag): KeyObject | null {
  try {
    if (bag.key) return createPrivateKey(forge.pki.privateKeyToPem(bag.key));
    if (bag.asn1) {
      const der = Buffer.from(forge.asn1.toDer(bag.asn1).getBytes(), 'binary');
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    }
  } catch {
    return null;
  }
  return null;
}

function derToPem(der: string): string {
  const b64 = forge.util.encode64(der).replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.trim()}\n-----END CERTIFICATE-----\n`;
}
