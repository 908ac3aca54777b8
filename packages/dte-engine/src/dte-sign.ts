import { ServiceError } from '@dte/error-catalog';

import { Caf, assertCafNotExpired } from './caf';
import { SigningCredential } from './crypto/certificate';
import { signingMaterial } from './crypto/keys';
import { normalizeRut } from './crypto/rut';
import { buildSignature } from './crypto/xmldsig';
import { assertCredentialValidAt } from './credential-checks';
import { DteDocument } from './model';
import { signTed } from './ted';
import { SII_NS, documentElementName, documentId, writeDocumentBody } from './xml/dte-xml';
import { el, siiTimestamp } from './xml/text';

export interface StampAndSignOptions {
  caf: Caf;
  credential: SigningCredential;
  /** TSTED, TmstFirma, and the instant the CAF and certificate must be valid at */
  timestamp: Date;
}

/**
 * Serializes one document, stamps its TED with the CAF and signs it: the signed
 * `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0">` text, ready to be inserted unchanged
 * into an EnvioDTE. The DTE is signed as a standalone document (the way the SII checks it), and
 * carries its own default namespace so it reads the same inside the envelope.
 */
export function stampAndSignDte(doc: DteDocument, opts: StampAndSignOptions): string {
  const { caf, credential, timestamp } = opts;
  const { TipoDTE: tipo, Folio: folio } = doc.Encabezado.IdDoc;
  if (caf.tipoDte !== tipo) {
    throw new ServiceError(
      'caf.wrong_tipo',
      `the CAF is for type ${caf.tipoDte}, the document is type ${tipo}`,
      {
        detail: { tipoDte: caf.tipoDte, expected: tipo },
      },
    );
  }
  if (!Number.isInteger(folio) || folio < caf.desde || folio > caf.hasta) {
    throw new ServiceError(
      'caf_not_found',
      `folio ${folio} is outside the CAF range ${caf.desde}-${caf.hasta}`,
      {
        detail: { tipoDte: tipo, folio, desde: caf.desde, hasta: caf.hasta },
      },
    );
  }
  if (normalizeRut(doc.Encabezado.Emisor.RUTEmisor) !== caf.rutEmisor) {
    throw new ServiceError(
      'emisor_rut_mismatch',
      `the document's issuer ${doc.Encabezado.Emisor.RUTEmisor} is not the CAF's ${caf.rutEmisor}`,
      { detail: { rutEmisor: doc.Encabezado.Emisor.RUTEmisor, cafRutEmisor: caf.rutEmisor } },
    );
  }
  assertCafNotExpired(caf, timestamp);
  assertCredentialValidAt(credential, timestamp);
  const material = signingMaterial(credential);

  const name = documentElementName(tipo);
  const id = documentId(tipo, folio);
  const content =
    writeDocumentBody(doc) + signTed(doc, caf, timestamp) + el('TmstFirma', siiTimestamp(timestamp));
  // Standalone C14N of the referenced element: it renders the default namespace it inherits
  // from <DTE> (namespace declarations come before attributes).
  const canonical = `<${name} xmlns="${SII_NS}" ID="${id}">${content}</${name}>`;
  const signature = buildSignature(canonical, `#${id}`, material);
  return `<DTE xmlns="${SII_NS}" version="1.0"><${name} ID="${id}">${content}</${name}>${signature}</DTE>`;
}
