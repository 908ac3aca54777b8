import { KeyObject, X509Certificate } from 'node:crypto';

import { Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

import { canonicalForm } from '../xml/canonical';
import { childElements, childText, firstChild } from '../xml/dom';
import { CertificateInfo, readCertificate } from './certificate';
import { rsaPublicKeyFromParts, rsaSha1Verify, samePublicKey } from './keys';
import { C14N_ALG, DSIG_NS, ENVELOPED_ALG, sha1Base64 } from './xmldsig';

export interface SignatureCheck {
  valid: boolean;
  error?: string;
  certificate?: CertificateInfo;
  /** the Reference URI the signature covers */
  uri?: string;
}

/**
 * The literal texts of a signature whose signed element and SignedInfo are canonical as written
 * (what this package produces): with them the digest and SignedInfo are computed from the text
 * (xml/canonical.ts) instead of by xml-crypto, which is slow on large envelopes. The caller
 * guarantees the ancestors declare no namespace but `inheritedNs` (exact root start tags).
 */
export interface CanonicalTexts {
  /** the referenced element's text */
  signedText: string;
  /** the default namespace it inherits */
  inheritedNs: string;
  /** the <Signature xmlns="…xmldsig#"> element's text */
  signatureText: string;
}

const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1';
const SIGNATURE_START = `<Signature xmlns="${DSIG_NS}">`;

/**
 * Verifies one <Signature> of the SII profile (PROTOCOL.md §9). The key is the RSAKeyValue; the
 * X509Certificate must hold the same key (the SII refuses a mismatch at login, code 21).
 * `expectedUri` guards against a signature covering another element than the one presented
 * (signature wrapping). The cryptographic check runs on the canonical texts when given and
 * usable, else with xml-crypto (an implementation independent of the writer) on `xmlText`.
 */
export function verifySignatureElement(
  xmlText: string,
  signature: Element,
  expectedUri: string,
  expectedTransform: string = C14N_ALG,
  texts?: CanonicalTexts,
): SignatureCheck {
  const signedInfo = firstChild(signature, 'SignedInfo');
  const refs = signedInfo ? childElements(signedInfo).filter((c) => c.localName === 'Reference') : [];
  if (!signedInfo || refs.length !== 1) {
    return { valid: false, error: `expected exactly one Reference, found ${refs.length}` };
  }
  const ref = refs[0] as Element;
  const uri = ref.getAttribute('URI') ?? '';
  if (uri !== expectedUri)
    return { valid: false, uri, error: `the signature covers "${uri}", not "${expectedUri}"` };
  const transforms = firstChild(ref, 'Transforms');
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
    let certKey: KeyObject | undefined;
    if (certB64) {
      const cert = readCertCached(certB64);
      certKey = cert.publicKey;
      if (cert.info) result = { ...result, certificate: cert.info };
    }
    const fast = texts ? checkFromText(texts, signedInfo, ref, signature, key) : undefined;
    if (fast !== undefined) {
      if (fast) return { ...result, error: fast };
    } else {
      const sx = new SignedXml({ publicCert: key.export({ type: 'spki', format: 'pem' }) as string });
      sx.loadSignature(signature as never);
      if (!sx.checkSignature(xmlText)) return { ...result, error: 'the signature does not verify' };
    }
    if (!certKey) return { ...result, error: 'KeyInfo has no X509Certificate' };
    if (!samePublicKey(certKey, key)) {
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

/**
 * The check on canonical texts: '' when it verifies, an error text when it does not, undefined
 * when the texts are not canonical (the caller falls back to xml-crypto).
 */
function checkFromText(
  texts: CanonicalTexts,
  signedInfo: Element,
  ref: Element,
  signature: Element,
  key: ReturnType<typeof rsaPublicKeyFromParts>,
): string | undefined {
  const { signatureText } = texts;
  if (!signatureText.startsWith(SIGNATURE_START)) return undefined;
  const siEnd = signatureText.indexOf('</SignedInfo>');
  if (!signatureText.startsWith('<SignedInfo>', SIGNATURE_START.length) || siEnd < 0) return undefined;
  const siCanonical = canonicalForm(
    signatureText.slice(SIGNATURE_START.length, siEnd + '</SignedInfo>'.length),
    DSIG_NS,
    true,
  );
  const signedCanonical = canonicalForm(texts.signedText, texts.inheritedNs, true);
  if (siCanonical === undefined || signedCanonical === undefined) return undefined;
  if (firstChild(signedInfo, 'CanonicalizationMethod')?.getAttribute('Algorithm') !== C14N_ALG)
    return undefined;
  if (firstChild(signedInfo, 'SignatureMethod')?.getAttribute('Algorithm') !== RSA_SHA1) return undefined;
  if (firstChild(ref, 'DigestMethod')?.getAttribute('Algorithm') !== SHA1) return undefined;
  const digest = (childText(ref, 'DigestValue') ?? '').replace(/\s+/g, '');
  if (digest !== sha1Base64(signedCanonical))
    return 'the digest of the signed element does not match (altered content)';
  const value = childText(signature, 'SignatureValue') ?? '';
  return rsaSha1Verify(Buffer.from(siCanonical, 'utf8'), value, key) ? '' : 'the signature does not verify';
}

interface CachedCertificate {
  /** the certificate's public key, read once (X509Certificate.publicKey makes a new one per call) */
  publicKey: KeyObject;
  info?: CertificateInfo;
}
const certCache = new Map<string, CachedCertificate>();

/** Envelopes repeat one certificate in every DTE: read it once. */
function readCertCached(certB64: string): CachedCertificate {
  const b64 = certB64.replace(/\s+/g, '');
  let hit = certCache.get(b64);
  if (!hit) {
    const pem = `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
    const x509 = new X509Certificate(pem);
    let info: CertificateInfo | undefined;
    try {
      info = readCertificate(pem);
    } catch {
      // a certificate without a RUT still identifies the key; report the signature anyway
    }
    hit = info ? { publicKey: x509.publicKey, info } : { publicKey: x509.publicKey };
    if (certCache.size > 100) certCache.clear();
    certCache.set(b64, hit);
  }
  return hit;
}

export { ENVELOPED_ALG };
