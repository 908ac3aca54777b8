/**
 * Bounds on the work a .p12 file may ask for, checked on its ASN.1 structure before any key
 * derivation runs. A PKCS#12 file names its own iteration counts (the MAC's PKCS#12 KDF, each
 * PBES1 / PKCS#12-PBE or PBES2/PBKDF2 encryption); node-forge derives synchronously with whatever
 * count the file says, so a 2.6 KB file with 2 000 000 iterations blocks a process for tens of
 * seconds. Real SII certificates use about 2 048 (openssl's and Windows' default); Java keytool
 * uses 10 000.
 */
import forge from 'node-forge';

import { ServiceError } from '@dte/error-catalog';

/** Largest iteration count accepted for the MAC and for every key-encryption (PBES1 and PBES2). */
export const P12_MAX_ITERATIONS = 20_000;
/** Largest .p12 file accepted (bytes); real ones are 3–10 KB. */
export const P12_MAX_BYTES = 64 * 1024;

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
};
/** PBES1 (PKCS#5 v1.5, 1.2.840.113549.1.5.{1,3,4,6,10,11}) and PKCS#12 PBE (1.2.840.113549.1.12.1.*) */
const isPbes1 = (oid: string) => /^1\.2\.840\.113549\.1\.(5\.(1|3|4|6|10|11)|12\.1\.\d+)$/.test(oid);

function invalid(reason: string): ServiceError {
  return new ServiceError('cert.invalid', reason, {});
}

type Node = forge.asn1.Asn1;
const kids = (n: Node | undefined): Node[] => (n && Array.isArray(n.value) ? n.value : []);
const oidOf = (n: Node | undefined): string | null => {
  if (!n || n.type !== forge.asn1.Type.OID || typeof n.value !== 'string') return null;
  try {
    return forge.asn1.derToOid(n.value);
  } catch {
    return null;
  }
};

/** An INTEGER's value, or Infinity when it does not fit in 6 bytes (never a small count). */
function integerOf(n: Node | undefined, what: string): number {
  if (!n || n.type !== forge.asn1.Type.INTEGER || typeof n.value !== 'string' || n.value.length === 0)
    throw invalid(`the .p12 file is malformed: ${what} is not an INTEGER`);
  const bytes = n.value;
  if (bytes.charCodeAt(0) & 0x80) throw invalid(`the .p12 file is malformed: ${what} is negative`);
  if (bytes.length > 6) return Infinity;
  let v = 0;
  for (let i = 0; i < bytes.length; i++) v = v * 256 + bytes.charCodeAt(i);
  return v;
}

/** The bytes an OCTET STRING holds, joining the pieces of a constructed (BER) one. */
function octets(n: Node | undefined, what: string): string {
  if (!n || n.type !== forge.asn1.Type.OCTETSTRING)
    throw invalid(`the .p12 file is malformed: ${what} is not an OCTET STRING`);
  if (typeof n.value === 'string') return n.value;
  return kids(n)
    .map((k) => octets(k, what))
    .join('');
}

function parse(bytes: string, what: string): Node {
  try {
    return forge.asn1.fromDer(forge.util.createBuffer(bytes), false);
  } catch {
    throw invalid(`the .p12 file is malformed: ${what} is not ASN.1`);
  }
}

function checkCount(count: number, what: string): void {
  if (count > P12_MAX_ITERATIONS) {
    throw invalid(
      `the .p12 file asks for ${Number.isFinite(count) ? count : 'an enormous number of'} ${what} iterations; ` +
        `at most ${P12_MAX_ITERATIONS} are accepted (real certificates use about 2048): export it again ` +
        `(openssl pkcs12 -export -iter 2048 -maciter 2048)`,
    );
  }
  if (count < 1) throw invalid(`the .p12 file asks for ${count} ${what} iterations`);
}

/**
 * The iteration count of a password-based encryption AlgorithmIdentifier (PBES1, PKCS#12 PBE or
 * PBES2 with PBKDF2). Other algorithms derive nothing from a password: 0.
 */
export function pbeIterations(algorithmIdentifier: Node): number {
  const [algOid, params] = kids(algorithmIdentifier);
  const oid = oidOf(algOid);
  if (oid === null) throw invalid('the .p12 file is malformed: an encryption algorithm has no OID');
  if (isPbes1(oid)) return integerOf(kids(params)[1], 'a PBES1 iteration count');
  if (oid === OID.pbes2) {
    const kdf = kids(params)[0];
    const kdfOid = oidOf(kids(kdf)[0]);
    if (kdfOid !== OID.pbkdf2)
      throw invalid(`the .p12 file uses an unsupported PBES2 key derivation ${kdfOid}`);
    return integerOf(kids(kids(kdf)[1])[1], 'a PBKDF2 iteration count');
  }
  return 0;
}

/** The shrouded keys of a SafeContents: each one's encryption must be within the bound. */
function checkSafeContents(safeContents: Node, seen: (count: number, what: string) => void): void {
  for (const bag of kids(safeContents)) {
    const [bagId, bagValue] = kids(bag);
    if (oidOf(bagId) !== OID.pkcs8ShroudedKeyBag) continue;
    const encryptedPrivateKeyInfo = kids(bagValue)[0];
    const algorithm = kids(encryptedPrivateKeyInfo)[0];
    if (!algorithm) throw invalid('the .p12 file is malformed: a shrouded key has no algorithm');
    seen(pbeIterations(algorithm), 'key-encryption');
  }
}

/**
 * Refuses (`cert.invalid`, with the reason) a .p12 whose MAC or any key-encryption asks for more
 * than P12_MAX_ITERATIONS iterations, reading only its ASN.1 structure. An encrypted SafeContents
 * (where openssl puts the certificates, and where a file may hide a shrouded key) is opened with
 * its own, already checked, bounded derivation so that the keys inside are checked too before
 * node-forge derives anything (`inspectEncrypted: false` skips that step: no derivation at all).
 * Returns the largest count seen.
 */
export function checkP12Iterations(
  p12: Buffer,
  password: string,
  opts: {
    /** open encrypted SafeContents to check the keys inside (a bounded derivation); default true */
    inspectEncrypted?: boolean;
  } = {},
): number {
  if (p12.length > P12_MAX_BYTES) throw invalid(`the .p12 file is larger than ${P12_MAX_BYTES} bytes`);
  const pfx = parse(p12.toString('binary'), 'the file');
  const [, authSafe, macData] = kids(pfx);
  let max = 0;
  const seen = (count: number, what: string) => {
    checkCount(count, what);
    max = Math.max(max, count);
  };
  if (macData) {
    const iterations = kids(macData)[2];
    seen(iterations ? integerOf(iterations, 'the MAC iteration count') : 1, 'MAC');
  }
  const [contentType, content] = kids(authSafe);
  if (oidOf(contentType) !== OID.data)
    throw invalid('the .p12 file is not a password-integrity PKCS#12 file');
  const authenticatedSafe = parse(
    octets(kids(content)[0], 'the authenticated safe'),
    'the authenticated safe',
  );
  for (const contentInfo of kids(authenticatedSafe)) {
    const [type, explicit] = kids(contentInfo);
    const inner = kids(explicit)[0];
    const oid = oidOf(type);
    if (oid === OID.data) {
      checkSafeContents(parse(octets(inner, 'a SafeContents'), 'a SafeContents'), seen);
    } else if (oid === OID.encryptedData) {
      const encryptedContentInfo = kids(inner)[1];
      const [, algorithm, encrypted] = kids(encryptedContentInfo);
      if (!algorithm) throw invalid('the .p12 file is malformed: an EncryptedData has no algorithm');
      seen(pbeIterations(algorithm), 'key-encryption');
      if (encrypted && opts.inspectEncrypted !== false)
        checkSafeContents(decryptSafeContents(algorithm, encrypted, password), seen);
    }
  }
  return max;
}

/** node-forge's password-based cipher factory (not in its type definitions) */
const pbe = (
  forge.pki as unknown as {
    pbe: { getCipher(oid: string, params: Node, password: string): forge.cipher.BlockCipher };
  }
).pbe;

/** Opens an encrypted SafeContents the way node-forge does (its count is already bounded). */
function decryptSafeContents(algorithm: Node, encrypted: Node, password: string): Node {
  let cipher: forge.cipher.BlockCipher;
  try {
    const [algOid, params] = kids(algorithm);
    cipher = pbe.getCipher(forge.asn1.derToOid(algOid?.value as string), params as Node, password);
  } catch {
    throw invalid('the .p12 file cannot be read: unsupported encryption');
  }
  // [0] IMPLICIT OCTET STRING: primitive (bytes) or constructed (pieces)
  const bytes =
    typeof encrypted.value === 'string'
      ? encrypted.value
      : kids(encrypted)
          .map((k) => octets(k, 'the encrypted content'))
          .join('');
  cipher.update(forge.util.createBuffer(bytes));
  if (!cipher.finish()) throw invalid('the .p12 file cannot be read: wrong password or not a PKCS#12 file');
  return parse(cipher.output.getBytes(), 'an encrypted SafeContents');
}
