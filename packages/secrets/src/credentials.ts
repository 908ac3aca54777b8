/**
 * Opening the sealed signing material of the api's tables, in memory only: a certificate's .p12
 * and password (→ a SigningCredential), a CAF's stamping key (PEM). The plaintext buffers are
 * zeroed as soon as they have been read.
 */
import { readP12OffThread, type SigningCredential } from '@dte/engine';
import { cafKeyAad, certificateAad } from './aad';
import { LocalKeyWrapper, open, type KeyWrapper } from './envelope';

export interface SealedCertificate {
  id: string;
  p12Sealed: unknown;
  passwordSealed: unknown;
}

export async function openSigningCredential(
  keys: KeyWrapper,
  cert: SealedCertificate,
): Promise<SigningCredential> {
  const p12 = await open(keys, cert.p12Sealed, certificateAad(cert.id, 'p12'));
  try {
    const password = await open(keys, cert.passwordSealed, certificateAad(cert.id, 'password'));
    try {
      return await readP12OffThread(p12, password.toString('utf8'));
    } finally {
      password.fill(0);
    }
  } finally {
    p12.fill(0);
  }
}

export async function openCafPrivateKey(keys: KeyWrapper, cafId: string, sealed: unknown): Promise<string> {
  const pem = await open(keys, sealed, cafKeyAad(cafId));
  try {
    return pem.toString('utf8');
  } finally {
    pem.fill(0);
  }
}

/** The local master key wrapper from MASTER_KEY (base64 of 32 bytes) and MASTER_KEY_ID. */
export function localKeyWrapper(masterKeyB64: string, masterKeyId: string): LocalKeyWrapper {
  const key = Buffer.from(masterKeyB64, 'base64');
  if (key.length !== 32) throw new Error('MASTER_KEY must be the base64 of 32 bytes');
  return new LocalKeyWrapper({ [masterKeyId]: key }, masterKeyId);
}
