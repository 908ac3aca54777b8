import { X509Certificate } from 'node:crypto';

import { Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

import { CertificateInfo, readCertificate } from './certificate';
import { rsaPublicKeyFromParts, samePublicKey } from './keys';
import { C14N_ALG, ENVELOPED_ALG } from './xmldsig';
import { childElements, childText, firstChild } from '../xml/dom';

export interface SignatureCheck {
  valid: boolean;
  error?: string;
  certificate?: CertificateInfo;
  /** the Reference URI the signature covers */
  uri?: string;
}

/**
 * Verifies one <Signature> of the SII profile inside `xmlText` with xml-crypto — an
 * implementation independent of the writer in xmldsig.ts. The key is the RSAKeyValue; the
 * X509Certificate must hold the same key (the SII refuses a mismatch at login, code 21).
 * `expectedUri` guards against a signature that covers some other element than the one
 * presented (signature wrapping).
 */
export function verifySignatureElement(
  xmlText: string,
  signature: Element,
  expectedUri: string,
  expectedTransform: string = C14N_ALG,
): SignatureCheck {
  const signedInfo = firstChild(signature, 'SignedInfo');
  const refs = signedInfo ? childElements(signedInfo).filter((c) => c.localName === 'Reference') : [];
  if (refs.length !== 1)
    return { valid: false, error: `expected exactly one Reference, found ${refs.length}` };
  const uri = (refs[0] as Element).getAttribute('URI') ?? '';
  if (uri !== expectedUri)
    return { valid: false, uri, error: `the signature covers "${uri}", not "${expectedUri}"` };
  const transforms = firstChild(refs[0] as Element, 'Transforms');
  const algs = transforms ? childElements(transforms).map((t) => t.getAttribute('Algorithm')) : [];
  if (algs.length > 1 || (algs.length === 1 && algs[0] !== expectedTransform)) {
    return { valid: false, uri, error: `unexpected transforms ${algs.join(', ')}` };
  }
  const m = childText(signature, 'KeyInfo', 'KeyValue', 'RSAKeyValue', 'Modulus');
  const e = childText(signature, 'KeyInfo', 'KeyValue', 'RSAKeyValue', 'Exponent');
  const certB64 = childText(signature, 'KeyInfo', 'X509Data', 'X509Certificate');
  if (!m || !e) return { valid: false, uri, error: 'KeyInfo has no RSAKeyValue' };
  let result: SignatureCheck = { valid: false, uri };
  try {
    const key = rsaPublicKeyFromParts(m, e);
    let x509: X509Certificate | undefined;
    if (certB64) {
      const pem = `-----BEGIN CERTIFICATE-----\n${certB64.replace(/\s+/g, '')}\n-----END CERTIFICATE-----\n`;
      x509 = new X509Certificate(pem);
      try {
        result = { ...result, certificate: readCertificate(pem) };
      } catch {
        // a certificate without a RUT still identifies the key; report the signature anyway
      }
    }
    const sx = new SignedXml({ publicCert: key.export({ type: 'spki', format: 'pem' }) as string });
    sx.loadSignature(signature as never);
    if (!sx.checkSignature(xmlText)) return { ...result, error: 'the signature does not verify' };
    if (!x509) return { ...result, error: 'KeyInfo has no X509Certificate' };
    if (!samePublicKey(x509.publicKey, key)) {
      return {
        ...result,
        error: 'the signature verifies with RSAKeyValue, but the X509Certificate holds another key',
      };
    }
    return { ...result, valid: true };
  } catch (err) {
    return { ...result, error: (err as Error).message };
  }
}

export { ENVELOPED_ALG };
