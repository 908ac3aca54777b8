/**
 * Opening the sealed signing material of the api's tables, in memory only: a certificate's .p12
 * and password (→ a SigningCredential), a CAF's stamping key (PEM). The plaintext buffers are
 * zeroed as soon as they have been read.
 */
import { readP12OffThread, type SigningCredential } from '@dte/engine';
import { cafKeyAad, certificateAad } from './aad';
import { open, type KeyWrapper, type LocalKeyWrapper } from './envelope';
import { rotatingKeyWrapper } from './reseal';

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

/**
 * The local master key wrapper from MASTER_KEY (base64 of 32 bytes) and MASTER_KEY_ID, plus the
 * previous master keys of MASTER_KEYS_PREVIOUS (`id:base64,…`), which still open the rows sealed
 * before a rotation (see reseal.ts) but never seal.
 */
export function localKeyWrapper(
  masterKeyB64: string,
  masterKeyId: string,
  previous: string | undefined = process.env.MASTER_KEYS_PREVIOUS,
): LocalKeyWrapper {
  return rotatingKeyWrapper(masterKeyB64, masterKeyId, previous);
}
