import { Element } from '@xmldom/xmldom';

import { CertificateInfo } from './crypto/certificate';
import { publicKeyFromPem, rsaSha1Verify } from './crypto/keys';
import { CanonicalTexts, verifySignatureElement } from './crypto/verify-signature';
import { C14N_ALG } from './crypto/xmldsig';
import { DTE_START } from './xml/canonical';
import { SII_NS } from './xml/dte-xml';
import { verifyTedElement } from './ted';
import { checkTotalsArithmetic } from './totals-check';
import { AmountFinding, checkDocumentAmounts } from './amount-check';
import { decodeXml } from './xml/decode';
import { childElements, childText, firstChild, flatSerialize, parseXml } from './xml/dom';
import { cutOutDtes, ParsedEnvio } from './envio-read';

export interface EnvioDocumentVerification {
  id: string;
  tipoDte: number;
  folio: number;
  rutEmisor: string;
  rutReceptor: string;
  fchEmis: string;
  mntTotal: number;
  signatureValid: boolean;
  signatureError?: string;
  certificate?: CertificateInfo;
  tedValid: boolean;
  tedError?: string;
  /** header arithmetic (IVA, MntTotal) as checkTotalsArithmetic reads it */
  totalsValid: boolean;
  totalsError?: string;
  /** the SII's amount review (lines, sums, VAT, totals, exports' currency): checkDocumentAmounts */
  amountFindings: AmountFinding[];
  /** present when siiPublicKeys was given */
  cafSignatureValid?: boolean;
  cafError?: string;
  caf: {
    desde: number;
    hasta: number;
    idk: number;
    tipoDte: number;
    rutEmisor: string;
    fechaAutorizacion: string;
  };
}

export interface EnvioVerification {
  caratula: {
    rutEmisor: string;
    rutEnvia: string;
    rutReceptor: string;
    fchResol: string;
    nroResol: number;
    subTotales: { tpoDte: number; nroDte: number }[];
  };
  envelopeSignature: { valid: boolean; error?: string; certificate?: CertificateInfo };
  documents: EnvioDocumentVerification[];
}

export interface EnvioVerifyOptions {
  /** the SII public keys (PEM) by IDK: each CAF's FRMA is checked when given */
  siiPublicKeys?: Record<string, string>;
  /**
   * The envelope as the caller already parsed it (a receiver checks it is XML before verifying),
   * so it is not parsed twice: what readEnvio(text) returned (envio-read.ts: the DTEs parsed
   * standalone once, the envelope without them), or `{text, document}` with `document` what a
   * strict parse (no error, only warnings) made of `text`. It is used only when `text` is exactly
   * the text decoded here from `xml`; otherwise the envelope is parsed again.
   */
  parsed?: ParsedEnvio;
}

/**
 * Reads an EnvioDTE the way the SII does: the SetDTE signature inside the envelope, and each
 * DTE's signature on the DTE text cut out of the envelope as a standalone document; plus each
 * TED (FRMT with the CAF key, DD against the document) and, given the SII keys by IDK, each
 * CAF's FRMA. Pure and synchronous; schema validation is validateEnvioSchema.
 */
export function verifyEnvioDte(xml: Buffer | string, opts: EnvioVerifyOptions = {}): EnvioVerification {
  const text = decodeXml(xml);
  const parsed = opts.parsed && opts.parsed.text === text ? opts.parsed : undefined;
  const root = (parsed ? parsed.document : parseXml(text)).documentElement;
  if (!root || (root.localName !== 'EnvioDTE' && root.localName !== 'EnvioBOLETA'))
    throw new Error('the document is not an EnvioDTE or EnvioBOLETA');
  const set = firstChild(root, 'SetDTE');
  const car = set ? firstChild(set, 'Caratula') : undefined;
  if (!set || !car) throw new Error('the EnvioDTE has no SetDTE/Caratula');
  const caratula = {
    rutEmisor: childText(car, 'RutEmisor') ?? '',
    rutEnvia: childText(car, 'RutEnvia') ?? '',
    rutReceptor: childText(car, 'RutReceptor') ?? '',
    fchResol: childText(car, 'FchResol') ?? '',
    nroResol: Number(childText(car, 'NroResol')),
    subTotales: childElements(car)
      .filter((c) => c.localName === 'SubTotDTE')
      .map((s) => ({ tpoDte: Number(childText(s, 'TpoDTE')), nroDte: Number(childText(s, 'NroDTE')) })),
  };

  const envSig = childElements(root).find((c) => c.localName === 'Signature');
  const setId = set.getAttribute('ID') ?? '';
  const envelopeSignature = envSig
    ? pick(verifySignatureElement(text, envSig, `#${setId}`, C14N_ALG, envelopeTexts(text, setId)))
    : { valid: false, error: 'the EnvioDTE has no Signature' };

  // the DTEs as readEnvio parsed them standalone, else cut out here (parsed in verifyOneDte)
  const dtes: { text: string; root?: Element }[] = parsed?.dtes ?? cutOutDtes(text).map((t) => ({ text: t }));
  const documents = dtes.map((dte, i) => {
    try {
      return verifyOneDte(dte.text, opts.siiPublicKeys, dte.root);
    } catch (err) {
      return unreadableDocument(i, (err as Error).message);
    }
  });
  return { caratula, envelopeSignature, documents };
}

/**
 * Reads a lone DTE (a received document, not inside an EnvioDTE) exactly as one DTE of an
 * envelope is read: its own signature, its TED and its arithmetic (and the CAF's FRMA given the
 * SII keys). Throws when the document is not a DTE.
 */
export function verifyDte(
  xml: Buffer | string,
  opts: { siiPublicKeys?: Record<string, string> } = {},
): EnvioDocumentVerification {
  const text = decodeXml(xml);
  const root = parseXml(text).documentElement;
  if (!root || root.localName !== 'DTE') throw new Error('the document is not a DTE');
  const dtes = cutOutDtes(text);
  if (dtes.length !== 1) throw new Error('a lone DTE file must hold exactly one DTE');
  return verifyOneDte(dtes[0] as string, opts.siiPublicKeys);
}

/** The local name of the root element of an XML file (EnvioDTE, DTE, ...). */
export function xmlRootName(xml: Buffer | string): string {
  return parseXml(decodeXml(xml)).documentElement?.localName ?? '';
}

function pick(check: { valid: boolean; error?: string; certificate?: CertificateInfo }): {
  valid: boolean;
  error?: string;
  certificate?: CertificateInfo;
} {
  return {
    valid: check.valid,
    ...(check.error ? { error: check.error } : {}),
    ...(check.certificate ? { certificate: check.certificate } : {}),
  };
}

const ENVELOPE_FORM = new RegExp(
  '^\\uFEFF?(?:<\\?xml [^>]*\\?>)?\\s*<(EnvioDTE|EnvioBOLETA) xmlns="http://www\\.sii\\.cl/SiiDte" version="1\\.0">' +
    '(<SetDTE ID="[^"]*">[\\s\\S]*</SetDTE>)(<Signature xmlns="http://www\\.w3\\.org/2000/09/xmldsig#">[\\s\\S]*</Signature>)</\\1>\\s*$',
);
const DTE_FORM = new RegExp(
  `^${DTE_START.replace(/[.]/g, '\\.')}(<(Documento|Exportaciones|Liquidacion) [^>]*>[\\s\\S]*</\\2>)` +
    '(<Signature xmlns="http://www\\.w3\\.org/2000/09/xmldsig#">[\\s\\S]*</Signature>)</DTE>$',
);

/** The texts for the fast check when the envelope has exactly the form buildEnvioDte writes. */
function envelopeTexts(text: string, setId: string): CanonicalTexts | undefined {
  const m = ENVELOPE_FORM.exec(text);
  if (!m || occurrences(text, ` ID="${setId}"`) !== 1) return undefined;
  return { signedText: m[2] as string, inheritedNs: SII_NS, signatureText: m[3] as string };
}

/** The texts for the fast check when the DTE has exactly the form stampAndSignDte writes. */
function dteTexts(dteText: string, id: string): CanonicalTexts | undefined {
  const m = DTE_FORM.exec(dteText);
  if (!m || occurrences(dteText, ` ID="${id}"`) !== 1) return undefined;
  return { signedText: m[1] as string, inheritedNs: SII_NS, signatureText: m[3] as string };
}

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) n++;
  return n;
}

/** A DTE that cannot even be parsed standalone: reported, not thrown, so the others still count. */
function unreadableDocument(index: number, message: string): EnvioDocumentVerification {
  const error = `DTE ${index + 1} cannot be read as a standalone document: ${message}`;
  return {
    id: '',
    tipoDte: NaN,
    folio: NaN,
    rutEmisor: '',
    rutReceptor: '',
    fchEmis: '',
    mntTotal: NaN,
    signatureValid: false,
    signatureError: error,
    tedValid: false,
    tedError: error,
    totalsValid: false,
    totalsError: error,
    amountFindings: [],
    caf: { desde: NaN, hasta: NaN, idk: NaN, tipoDte: NaN, rutEmisor: '', fechaAutorizacion: '' },
  };
}

export { cutOutDtes };

function verifyOneDte(
  dteText: string,
  siiKeys: Record<string, string> | undefined,
  /** the standalone tree of `dteText`, when readEnvio already made it */
  parsedRoot?: Element,
): EnvioDocumentVerification {
  // the DTE's text is parsed once, standalone; its signature, TED and arithmetic read this tree
  const dte = parsedRoot ?? (parseXml(dteText).documentElement as Element);
  const documento = childElements(dte).find((c) => c.localName !== 'Signature');
  const enc = documento ? firstChild(documento, 'Encabezado') : undefined;
  const id = documento?.getAttribute('ID') ?? '';
  const da = documento ? firstChild(documento, 'TED') : undefined;
  const cafEl = da ? firstChild(firstChild(da, 'DD') ?? da, 'CAF') : undefined;
  const daEl = cafEl ? firstChild(cafEl, 'DA') : undefined;
  const signature = childElements(dte).find((c) => c.localName === 'Signature');
  const sig = signature
    ? verifySignatureElement(dteText, signature, `#${id}`, C14N_ALG, dteTexts(dteText, id))
    : { valid: false, error: 'the DTE has no Signature' };
  const ted = verifyTedElement(dte);
  const totalsError = documento ? checkTotalsArithmetic(documento) : 'no Documento';
  const out: EnvioDocumentVerification = {
    id,
    tipoDte: Number(enc ? childText(enc, 'IdDoc', 'TipoDTE') : NaN),
    folio: Number(enc ? childText(enc, 'IdDoc', 'Folio') : NaN),
    rutEmisor: (enc && childText(enc, 'Emisor', 'RUTEmisor')) || '',
    rutReceptor: (enc && childText(enc, 'Receptor', 'RUTRecep')) || '',
    fchEmis: (enc && childText(enc, 'IdDoc', 'FchEmis')) || '',
    mntTotal: Number(enc ? childText(enc, 'Totales', 'MntTotal') : NaN),
    signatureValid: sig.valid,
    ...(sig.error ? { signatureError: sig.error } : {}),
    ...('certificate' in sig && sig.certificate ? { certificate: sig.certificate } : {}),
    tedValid: ted.valid,
    ...(ted.error ? { tedError: ted.error } : {}),
    totalsValid: !totalsError,
    ...(totalsError ? { totalsError } : {}),
    amountFindings: documento ? checkDocumentAmounts(documento) : [],
    caf: {
      desde: Number(daEl ? childText(daEl, 'RNG', 'D') : NaN),
      hasta: Number(daEl ? childText(daEl, 'RNG', 'H') : NaN),
      idk: Number(daEl ? childText(daEl, 'IDK') : NaN),
      tipoDte: Number(daEl ? childText(daEl, 'TD') : NaN),
      rutEmisor: (daEl && childText(daEl, 'RE')) || '',
      fechaAutorizacion: (daEl && childText(daEl, 'FA')) || '',
    },
  };
  if (siiKeys) {
    const keyPem = siiKeys[String(out.caf.idk)];
    const frma = cafEl ? childText(cafEl, 'FRMA') : undefined;
    if (!daEl || !frma) {
      out.cafSignatureValid = false;
      out.cafError = 'the TED holds no CAF DA/FRMA';
    } else if (!keyPem) {
      out.cafSignatureValid = false;
      out.cafError = `no SII public key for IDK ${out.caf.idk}`;
    } else {
      out.cafSignatureValid = cafFrmaVerifies(flatSerialize(daEl), frma, keyPem);
      if (!out.cafSignatureValid) out.cafError = `FRMA does not verify with the SII key ${out.caf.idk}`;
    }
  }
  return out;
}

/**
 * FRMA over the flattened DA with the SII key. Every document stamped from one CAF carries the
 * same DA and FRMA: a verification that succeeded is remembered by its exact inputs (the DA's
 * bytes, the FRMA, the key's PEM), so the same CAF is not verified again for each document. Only
 * successes are kept (a failure is recomputed), bounded like the key caches.
 */
const verifiedCafs = new Set<string>();
const MAX_VERIFIED_CAFS = 256;

function cafFrmaVerifies(flatDa: string, frma: string, keyPem: string): boolean {
  const sig = frma.replace(/\s+/g, '');
  const key = `${keyPem.length}:${keyPem}${sig.length}:${sig}${flatDa}`; // lengths: no two inputs alike
  if (verifiedCafs.has(key)) return true;
  const ok = rsaSha1Verify(Buffer.from(flatDa, 'latin1'), frma, publicKeyFromPem(keyPem));
  if (ok) {
    if (verifiedCafs.size >= MAX_VERIFIED_CAFS)
      verifiedCafs.delete(verifiedCafs.values().next().value as string);
    verifiedCafs.add(key);
  }
  return ok;
}
