import { KeyObject, createPrivateKey } from 'node:crypto';

import { ServiceError } from '@dte/error-catalog';
import { Element } from '@xmldom/xmldom';

import { Caf, cafParts } from './caf';
import { publicKeyFromPem, rsaPublicKeyFromParts, rsaSha1Sign, rsaSha1Verify } from './crypto/keys';
import { DteDocument, EXPORT_TYPES } from './model';
import { childElements, childText, firstChild, flatSerialize, parseXml } from './xml/dom';
import { el, siiTimestamp } from './xml/text';

/** RSR and IT1 hold at most 40 characters (DTE_v10.xsd). */
const TED_TEXT_MAX = 40;

interface CafStampMaterial {
  key: KeyObject;
  /** the CAF element flattened and canonical, as it goes inside the DD */
  canonicalCaf: string;
}
const stampCache = new WeakMap<Caf, CafStampMaterial>();

function stampMaterial(caf: Caf): CafStampMaterial {
  let m = stampCache.get(caf);
  if (!m) {
    let key: KeyObject;
    try {
      key = createPrivateKey(caf.rsaPrivateKeyPem);
    } catch (err) {
      throw new ServiceError('caf.parse_error', 'the CAF private key (RSASK) cannot be read', { cause: err });
    }
    m = { key, canonicalCaf: cafParts(caf.cafElementXml).canonical };
    stampCache.set(caf, m);
  }
  return m;
}

/**
 * The TED of a document: DD (RE, TD, F, FE, RR, RSR, MNT, IT1, CAF, TSTED) and FRMT, the
 * SHA1withRSA signature with the CAF's private key over the DD exactly as written here — no
 * namespace declaration, no whitespace between tags, ISO-8859-1 bytes (PROTOCOL.md §8). The DD
 * is written in that flat canonical form, so its text is also what a verifier reconstructs.
 */
export function signTed(doc: DteDocument, caf: Caf, timestamp: Date): string {
  const { IdDoc, Emisor, Receptor, Totales } = doc.Encabezado;
  const material = stampMaterial(caf);
  const rsr = (Receptor.RznSocRecep || Receptor.RUTRecep).slice(0, TED_TEXT_MAX);
  const it1 = (doc.Detalle[0]?.NmbItem ?? '').slice(0, TED_TEXT_MAX);
  if (!it1) throw new ServiceError('items_empty', 'the document has no items to name in the TED');
  const dd =
    '<DD>' +
    el('RE', Emisor.RUTEmisor) +
    el('TD', IdDoc.TipoDTE) +
    el('F', IdDoc.Folio) +
    el('FE', IdDoc.FchEmis) +
    el('RR', Receptor.RUTRecep) +
    el('RSR', rsr) +
    el('MNT', Totales.MntTotal) +
    el('IT1', it1) +
    material.canonicalCaf +
    el('TSTED', siiTimestamp(timestamp)) +
    '</DD>';
  const frmt = rsaSha1Sign(Buffer.from(dd, 'latin1'), material.key);
  return `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${frmt}</FRMT></TED>`;
}

export interface TedVerification {
  valid: boolean;
  error?: string;
}

/**
 * Checks a DTE's TED: FRMT over the flattened DD with the CAF's public key (the given PEM, else
 * the RSAPK inside the DD's CAF), and that the DD agrees with the document it stamps.
 */
export function verifyTed(dteXml: string, cafPublicKeyPem?: string): TedVerification {
  let root: Element | null;
  try {
    root = parseXml(dteXml).documentElement;
  } catch (err) {
    return { valid: false, error: `not well-formed XML: ${(err as Error).message}` };
  }
  if (!root) return { valid: false, error: 'empty document' };
  return verifyTedElement(root, cafPublicKeyPem);
}

/** verifyTed on a DTE element already parsed (the root of the DTE's text: verify.ts parses it once). */
export function verifyTedElement(dte: Element, cafPublicKeyPem?: string): TedVerification {
  const documento = childElements(dte).find((c) => c.localName !== 'Signature');
  const ted = documento ? firstChild(documento, 'TED') : undefined;
  const dd = ted ? firstChild(ted, 'DD') : undefined;
  const frmt = ted ? childText(ted, 'FRMT') : undefined;
  if (!documento || !ted || !dd || !frmt) return { valid: false, error: 'no TED/DD/FRMT in the document' };
  let key: KeyObject;
  try {
    if (cafPublicKeyPem) key = publicKeyFromPem(cafPublicKeyPem);
    else {
      const m = childText(dd, 'CAF', 'DA', 'RSAPK', 'M');
      const e = childText(dd, 'CAF', 'DA', 'RSAPK', 'E');
      if (!m || !e) return { valid: false, error: 'the TED CAF has no RSAPK' };
      key = rsaPublicKeyFromParts(m, e);
    }
  } catch (err) {
    return { valid: false, error: `the CAF public key cannot be read: ${(err as Error).message}` };
  }
  if (!rsaSha1Verify(Buffer.from(flatSerialize(dd), 'latin1'), frmt, key)) {
    return { valid: false, error: 'FRMT does not verify over DD with the CAF public key' };
  }
  const mismatch = ddMismatch(documento, dd);
  return mismatch ? { valid: false, error: mismatch } : { valid: true };
}

/** The DD must repeat the document's own data; a document altered after stamping fails here. */
function ddMismatch(documento: Element, dd: Element): string | undefined {
  const enc = firstChild(documento, 'Encabezado');
  if (!enc) return 'the document has no Encabezado';
  const tipo = Number(childText(enc, 'IdDoc', 'TipoDTE'));
  const pairs: [string, string | undefined, string | undefined][] = [
    ['RE', childText(dd, 'RE'), childText(enc, 'Emisor', 'RUTEmisor')],
    ['TD', childText(dd, 'TD'), childText(enc, 'IdDoc', 'TipoDTE')],
    ['F', childText(dd, 'F'), childText(enc, 'IdDoc', 'Folio')],
    ['FE', childText(dd, 'FE'), childText(enc, 'IdDoc', 'FchEmis')],
    ['RR', childText(dd, 'RR'), childText(enc, 'Receptor', 'RUTRecep')],
    ['MNT', childText(dd, 'MNT'), childText(enc, 'Totales', 'MntTotal')],
  ];
  for (const [name, inDd, inDoc] of pairs) {
    const same =
      name === 'MNT' || name === 'TD' || name === 'F'
        ? Number(inDd) === Number(inDoc)
        : inDd?.trim() === inDoc?.trim();
    if (!same) return `TED DD/${name} (${inDd}) differs from the document (${inDoc})`;
  }
  const ddCafTd = Number(childText(dd, 'CAF', 'DA', 'TD'));
  if (ddCafTd !== tipo) return `the TED's CAF is for type ${ddCafTd}, the document is type ${tipo}`;
  const folio = Number(childText(dd, 'F'));
  const d = Number(childText(dd, 'CAF', 'DA', 'RNG', 'D'));
  const h = Number(childText(dd, 'CAF', 'DA', 'RNG', 'H'));
  if (!(folio >= d && folio <= h)) return `folio ${folio} is outside the CAF range ${d}-${h}`;
  if (EXPORT_TYPES.includes(tipo as never) && !childText(enc, 'Totales', 'TpoMoneda')) {
    return 'export document without Totales/TpoMoneda';
  }
  return undefined;
}
