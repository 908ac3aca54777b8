import { ServiceError } from '@dte/error-catalog';

import { CertificateInfo, SigningCredential } from './crypto/certificate';
import { signingMaterial } from './crypto/keys';
import { verifySignatureElement } from './crypto/verify-signature';
import { ENVELOPED_ALG, buildSignature } from './crypto/xmldsig';
import { childText, firstChild, parseXml } from './xml/dom';
import { el } from './xml/text';

/**
 * The signed seed of the SII login (PROTOCOL.md §2): getToken > item > Semilla, then a
 * Signature with Reference URI="" and the single enveloped-signature transform, RSAKeyValue and
 * X509Certificate. GetTokenFromSeed receives this text.
 */
export function signSeedDocument(seed: string, credential: SigningCredential): string {
  if (!/^\S{1,64}$/.test(seed)) {
    throw new ServiceError('validation_failed', 'the seed must be a short non-blank token', {
      issues: [{ path: 'seed', message: 'must be 1-64 non-blank characters' }],
    });
  }
  const body = `<item>${el('Semilla', seed)}</item>`;
  // Enveloped signature with URI="": the digest is the C14N of the whole document without it.
  const signature = buildSignature(
    `<getToken>${body}</getToken>`,
    '',
    signingMaterial(credential),
    ENVELOPED_ALG,
  );
  return `<?xml version="1.0"?>\n<getToken>${body}${signature}</getToken>`;
}

export interface SeedVerification {
  valid: boolean;
  seed: string | null;
  certificate?: CertificateInfo;
  error?: string;
}

/** Checks a signed getToken document as GetTokenFromSeed would: structure, signature, key match. */
export function verifySeedDocument(xml: string): SeedVerification {
  let root;
  try {
    root = parseXml(xml).documentElement;
  } catch (err) {
    return { valid: false, seed: null, error: `invalid XML: ${(err as Error).message}` };
  }
  if (!root || root.localName !== 'getToken')
    return { valid: false, seed: null, error: 'the root is not getToken' };
  const seed = childText(root, 'item', 'Semilla')?.trim() ?? null;
  if (!seed) return { valid: false, seed: null, error: 'no Semilla element' };
  const signature = firstChild(root, 'Signature');
  if (!signature) return { valid: false, seed, error: 'no Signature element' };
  const check = verifySignatureElement(xml, signature, '', ENVELOPED_ALG);
  return {
    valid: check.valid,
    seed,
    ...(check.certificate ? { certificate: check.certificate } : {}),
    ...(check.error ? { error: check.error } : {}),
  };
}
