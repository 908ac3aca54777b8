import { createHash } from 'node:crypto';

import { SigningMaterial, rsaSha1Sign } from './keys';

/**
 * XMLDSig as the SII profile wants it (xmldsignature_v10.xsd, PROTOCOL.md §9): inclusive C14N,
 * rsa-sha1, one Reference, at most one Transform, sha1 digest, KeyInfo with RSAKeyValue then
 * X509Certificate, the dsig namespace as the default namespace of <Signature>.
 *
 * The signed content is written by this package in canonical form, so the caller hands over
 * the exact canonical bytes to digest; SignedInfo is also written canonically, so the bytes that
 * are signed are the bytes in the document (plus the inherited dsig namespace declaration).
 */
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
export const C14N_ALG = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
export const ENVELOPED_ALG = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1';

export function sha1Base64(canonical: string): string {
  return createHash('sha1').update(canonical, 'utf8').digest('base64');
}

/** SignedInfo's inner content (without the SignedInfo tags). */
function signedInfoContent(uri: string, transform: string, digestB64: string): string {
  return (
    `<CanonicalizationMethod Algorithm="${C14N_ALG}"></CanonicalizationMethod>` +
    `<SignatureMethod Algorithm="${RSA_SHA1}"></SignatureMethod>` +
    `<Reference URI="${uri}"><Transforms><Transform Algorithm="${transform}"></Transform></Transforms>` +
    `<DigestMethod Algorithm="${SHA1}"></DigestMethod><DigestValue>${digestB64}</DigestValue></Reference>`
  );
}

/**
 * A complete <Signature> element over content whose canonical form is `canonicalContent`.
 * `uri` is "#ID" for DTEs and the SetDTE (C14N transform) or "" for the login seed
 * (enveloped-signature transform).
 */
export function buildSignature(
  canonicalContent: string,
  uri: string,
  material: SigningMaterial,
  transform: string = C14N_ALG,
): string {
  const inner = signedInfoContent(uri, transform, sha1Base64(canonicalContent));
  // SignedInfo inherits only the dsig default namespace: the <Signature> redeclares xmlns, and
  // the documents we write carry no other namespace declarations (no xmlns:xsi).
  const signatureValue = rsaSha1Sign(`<SignedInfo xmlns="${DSIG_NS}">${inner}</SignedInfo>`, material.key);
  return (
    `<Signature xmlns="${DSIG_NS}"><SignedInfo>${inner}</SignedInfo>` +
    `<SignatureValue>${signatureValue}</SignatureValue>` +
    `<KeyInfo><KeyValue><RSAKeyValue><Modulus>${material.modulusB64}</Modulus>` +
    `<Exponent>${material.exponentB64}</Exponent></RSAKeyValue></KeyValue>` +
    `<X509Data><X509Certificate>${material.certificateB64}</X509Certificate></X509Data></KeyInfo></Signature>`
  );
}
