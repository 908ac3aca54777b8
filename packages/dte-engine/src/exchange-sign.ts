import { ServiceError } from '@dte/error-catalog';
import type { Element } from '@xmldom/xmldom';
import { C14nCanonicalization } from 'xml-crypto';

import type { SigningCredential } from './crypto/certificate';
import { signingMaterial } from './crypto/keys';
import { buildSignature } from './crypto/xmldsig';
import { assertCredentialValidAt } from './credential-checks';
import { parseXml } from './xml/dom';

/**
 * The XML-DSig of the SII profile (the one DTEs and envelopes carry: inclusive C14N, rsa-sha1,
 * RSAKeyValue and X509Certificate) over the element whose attribute ID is `id`, as it reads in
 * `documentText` (its place in the document, so it inherits the namespaces it will have). For
 * the documents a receiver writes back (RespuestaDTE, Recibo, EnvioRecibos): the caller puts
 * the returned `<Signature>` right after that element, and nothing is re-serialized.
 */
export function signReferencedElement(
  documentText: string,
  id: string,
  credential: SigningCredential,
  at: Date,
): string {
  assertCredentialValidAt(credential, at);
  let target: Element | undefined;
  try {
    target = findById(parseXml(documentText).documentElement as unknown as Element, id);
  } catch (err) {
    throw new ServiceError(
      'validation_failed',
      `the document to sign is not well-formed: ${(err as Error).message}`,
      {
        issues: [{ path: 'xml', message: 'not well-formed' }],
      },
    );
  }
  if (!target) throw new Error(`no element with ID ${id} to sign`);
  const canonical = new C14nCanonicalization().process(target as never, {}) as string;
  return buildSignature(canonical, `#${id}`, signingMaterial(credential));
}

function findById(el: Element, id: string): Element | undefined {
  if (el.getAttribute('ID') === id) return el;
  for (let i = 0; i < el.childNodes.length; i++) {
    const k = el.childNodes[i];
    if (k && k.nodeType === 1) {
      const hit = findById(k as Element, id);
      if (hit) return hit;
    }
  }
  return undefined;
}
