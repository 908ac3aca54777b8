import { ServiceError } from '@dte/error-catalog';
import { C14nCanonicalization } from 'xml-crypto';

import { SigningCredential } from './crypto/certificate';
import { signingMaterial } from './crypto/keys';
import { normalizeRut } from './crypto/rut';
import { buildSignature } from './crypto/xmldsig';
import { assertCredentialValidAt } from './credential-checks';
import { canonicalInEnvelope } from './xml/canonical';
import { SII_NS } from './xml/dte-xml';
import { firstChild, parseXml } from './xml/dom';
import { assertLatin1, el, siiTimestamp } from './xml/text';

/** EnvioDTE_v10.xsd: at most 2000 DTE per SetDTE and 20 SubTotDTE (document types). */
export const MAX_DTE_PER_ENVIO = 2000;
export const MAX_TYPES_PER_ENVIO = 20;
/** The SII's RUT, the receiver of every upload (Carátula RutReceptor). */
export const SII_RUT = '60803000-K';

export interface EnvioOptions {
  rutEmisor: string;
  /** RUT of the certificate's holder, who sends */
  rutEnvia: string;
  /** YYYY-MM-DD of the SII resolution (certification: the date the SII shows, with NroResol 0) */
  fchResol: string;
  nroResol: number;
  credential: SigningCredential;
  timestamp: Date;
  /** SetDTE ID, default "SetDoc" */
  setId?: string;
  /** Carátula RutReceptor: the SII (default) for an upload, the receptor for an intercambio */
  rutReceptor?: string;
}

/**
 * What tells one SII envelope of signed documents from another (EnvioDTE, EnvioBOLETA): the
 * rest (Carátula, SubTotDTE, the SetDTE signed in place, the checks of each document) is one.
 */
export interface EnvelopeKind {
  /** the root element, in the SII namespace, version 1.0 */
  root: 'EnvioDTE' | 'EnvioBOLETA';
  /** one document and several, in the envelope's errors ("at least one boleta", "500 boletas") */
  noun: string;
  nouns: string;
  /** the schema's bounds: documents per SetDTE, SubTotDTE (document types) per Carátula */
  maxDocuments: number;
  maxTypes: number;
  /** the document types it may hold (a `noun` each); any type when absent */
  tipos?: readonly number[];
  /** whether it also carries an intercambio: Carátula RutReceptor may name the receptor (else the SII) */
  intercambio: boolean;
}

export const ENVIO_DTE: EnvelopeKind = {
  root: 'EnvioDTE',
  noun: 'DTE',
  nouns: 'DTE',
  maxDocuments: MAX_DTE_PER_ENVIO,
  maxTypes: MAX_TYPES_PER_ENVIO,
  intercambio: true,
};

function envioError(message: string, detail?: Record<string, unknown>): ServiceError {
  return new ServiceError('validation_failed', message, {
    issues: [{ path: 'envio', message }],
    ...(detail ? { detail } : {}),
  });
}

/**
 * The EnvioDTE as ISO-8859-1 bytes: Carátula, the signed DTEs inserted unchanged, and the
 * SetDTE signed in place (buildSignedEnvelope).
 */
export function buildEnvioDte(signedDtes: string[], opts: EnvioOptions): Buffer {
  return buildSignedEnvelope(ENVIO_DTE, signedDtes, opts);
}

/**
 * An envelope of `kind` as ISO-8859-1 bytes: Carátula, the signed documents inserted unchanged,
 * and the SetDTE signed in place (`Reference URI="#<setId>"`). The root carries only the SII
 * default namespace (no xmlns:xsi or schemaLocation), so every DTE inherits exactly the namespace
 * it declares and its signature reads the same cut out or in place (PROTOCOL.md, "What this
 * project does about the namespace pitfall"). Nothing is re-serialized after signing.
 */
export function buildSignedEnvelope(kind: EnvelopeKind, signedDtes: string[], opts: EnvioOptions): Buffer {
  const { root: rootName, maxDocuments } = kind;
  if (signedDtes.length === 0) throw envioError(`an ${rootName} needs at least one ${kind.noun}`);
  if (signedDtes.length > maxDocuments) {
    throw envioError(
      `an ${rootName} holds at most ${maxDocuments} ${kind.nouns}, got ${signedDtes.length}: split it`,
      {
        max: maxDocuments,
        count: signedDtes.length,
      },
    );
  }
  const rutEmisor = normalizeRut(opts.rutEmisor);
  const rutEnvia = normalizeRut(opts.rutEnvia);
  if (!rutEmisor || !rutEnvia) throw envioError('rutEmisor and rutEnvia must be RUTs');
  if (rutEnvia !== opts.credential.info.rut) {
    throw new ServiceError(
      'cert_subject_mismatch',
      `RutEnvia ${rutEnvia} is not the certificate holder ${opts.credential.info.rut}`,
      { detail: { rutEnvia, certificateRut: opts.credential.info.rut } },
    );
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(opts.fchResol)) throw envioError('fchResol must be YYYY-MM-DD');
  if (!Number.isInteger(opts.nroResol) || opts.nroResol < 0 || opts.nroResol > 999999) {
    throw envioError('nroResol must be an integer of at most 6 digits');
  }
  const setId = opts.setId ?? 'SetDoc';
  if (!/^[A-Za-z_][\w.-]*$/.test(setId)) throw envioError(`setId ${setId} is not an XML ID`);
  assertCredentialValidAt(opts.credential, opts.timestamp);

  const counts = new Map<number, number>();
  const dtes = signedDtes.map((raw, i) => {
    const dte = raw.replace(/^\uFEFF?\s*(<\?xml[^>]*\?>)?\s*/, '').trimEnd();
    const start = /^<DTE(\s[^>]*)?>/.exec(dte);
    if (!start || !dte.endsWith('</DTE>')) throw envioError(`document ${i + 1} is not a <DTE> element`);
    if (!/\sxmlns="http:\/\/www\.sii\.cl\/SiiDte"/.test(start[0])) {
      throw envioError(`document ${i + 1} does not declare xmlns="${SII_NS}" on <DTE>`);
    }
    const tipo = Number(/<TipoDTE>\s*(\d+)\s*<\/TipoDTE>/.exec(dte)?.[1]);
    const emisor = /<RUTEmisor>\s*([^<]+?)\s*<\/RUTEmisor>/.exec(dte)?.[1];
    if (!tipo || !emisor) throw envioError(`document ${i + 1} has no TipoDTE or RUTEmisor`);
    if (kind.tipos && !kind.tipos.includes(tipo)) {
      throw envioError(`document ${i + 1} is type ${tipo}, not a ${kind.noun} (${kind.tipos.join('/')})`);
    }
    if (normalizeRut(emisor) !== rutEmisor) {
      throw new ServiceError(
        'emisor_rut_mismatch',
        `document ${i + 1} is issued by ${emisor}, not ${rutEmisor}`,
        {
          detail: { rutEmisor, documentRutEmisor: emisor, index: i },
        },
      );
    }
    assertLatin1(dte, 'DTE');
    counts.set(tipo, (counts.get(tipo) ?? 0) + 1);
    return dte;
  });
  if (counts.size > kind.maxTypes) {
    throw envioError(`an ${rootName} holds at most ${kind.maxTypes} document types, got ${counts.size}`, {
      max: kind.maxTypes,
      count: counts.size,
    });
  }
  const subTotales = [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([tipo, n]) => `<SubTotDTE>${el('TpoDTE', tipo)}${el('NroDTE', n)}</SubTotDTE>`)
    .join('');
  const rutReceptor = kind.intercambio && opts.rutReceptor && normalizeRut(opts.rutReceptor);
  const caratula =
    '<Caratula version="1.0">' +
    el('RutEmisor', rutEmisor) +
    el('RutEnvia', rutEnvia) +
    el('RutReceptor', rutReceptor || SII_RUT) +
    el('FchResol', opts.fchResol) +
    el('NroResol', opts.nroResol) +
    el('TmstFirmaEnv', siiTimestamp(opts.timestamp)) +
    subTotales +
    '</Caratula>';
  const setDte = `<SetDTE ID="${setId}">${caratula}${dtes.join('')}</SetDTE>`;
  const root = `<${rootName} xmlns="${SII_NS}" version="1.0">`;
  const signature = buildSignature(
    fastCanonicalSetDte(setId, caratula, dtes) ?? canonicalSetDte(root, setDte),
    `#${setId}`,
    signingMaterial(opts.credential),
  );
  const xml = `<?xml version="1.0" encoding="ISO-8859-1"?>\n${root}${setDte}${signature}</${rootName}>`;
  return Buffer.from(xml, 'latin1');
}

/**
 * The same C14N computed from the text when every DTE is one this package wrote (canonical by
 * construction, checked by canonicalInEnvelope); undefined sends the caller to the real one.
 */
export function fastCanonicalSetDte(setId: string, caratula: string, dtes: string[]): string | undefined {
  const parts: string[] = [`<SetDTE xmlns="${SII_NS}" ID="${setId}">`, caratula];
  for (const dte of dtes) {
    const c = canonicalInEnvelope(dte);
    if (c === undefined) return undefined;
    parts.push(c);
  }
  parts.push('</SetDTE>');
  return parts.join('');
}

/**
 * Inclusive C14N of the SetDTE in its place in the envelope (it inherits the root's default
 * namespace). The embedded DTEs come from outside this call, so a real canonicalizer runs here.
 */
export function canonicalSetDte(rootStartTag: string, setDte: string): string {
  let doc;
  try {
    const rootName = /^<([A-Za-z_][\w.-]*)/.exec(rootStartTag)?.[1] ?? 'EnvioDTE';
    doc = parseXml(`${rootStartTag}${setDte}</${rootName}>`);
  } catch (err) {
    throw envioError(`the DTEs do not form well-formed XML: ${(err as Error).message}`);
  }
  const set = firstChild(doc.documentElement as never, 'SetDTE');
  if (!set) throw envioError('SetDTE missing');
  // xml-crypto renders the inherited default namespace on the apex itself (passing it again as
  // an ancestor namespace would duplicate it).
  return new C14nCanonicalization().process(set as never, {});
}
