/**
 * The first gate of a received XML file (an EnvioDTE another issuer sends us, or a lone DTE):
 * what an XML parser could be tricked into doing is refused before any parser sees the bytes.
 *
 * - size: more than `maxBytes` → `tamano_excedido` (the SII's own upload limit is 10 MB);
 * - any document type declaration (`<!DOCTYPE`) or entity declaration (`<!ENTITY`) →
 *   `dtd_prohibido`: the SII's schemas use none, and a DTD is what the billion-laughs entity
 *   expansion, external entities (XXE: `SYSTEM "file:///etc/passwd"`, `http://…`) and
 *   parameter entities need; so no entity is ever declared, expanded or fetched;
 * - XInclude (`xi:include`) → `xinclude_prohibido`; processing instructions other than the XML
 *   declaration → `instruccion_prohibida`;
 * - nesting deeper than `maxDepth` or more than `maxElements` elements → `estructura_excesiva`
 *   (a quadratic-blowup or deep-nesting file is refused before the DOM is built);
 * - not well-formed (the parser stops at the first error, no recovery) → `xml_mal_formado`.
 * - UTF-16 or bytes with NUL → `codificacion_no_admitida` (SII files are ISO-8859-1 or UTF-8,
 *   and the markup checks above read the text as one of those).
 */
import { DOMParser, onErrorStopParsing, type Document } from '@xmldom/xmldom';

export interface XmlLimits {
  maxBytes: number;
  maxDepth: number;
  maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlLimits = {
  maxBytes: 10 * 1024 * 1024,
  maxDepth: 64,
  maxElements: 200_000,
};

export type RefusalReason =
  | 'tamano_excedido'
  | 'codificacion_no_admitida'
  | 'dtd_prohibido'
  | 'xinclude_prohibido'
  | 'instruccion_prohibida'
  | 'estructura_excesiva'
  | 'xml_mal_formado'
  | 'raiz_no_admitida'
  | 'firma_sobre_invalida'
  | 'sobre_para_otra_empresa'
  | 'dte_para_otra_empresa'
  | 'firma_dte_invalida'
  | 'ted_invalido'
  | 'caf_invalido'
  | 'totales_invalidos'
  | 'sin_documentos'
  | 'demasiados_documentos';

/** A received file refused: `reason` says why (and `documento` which DTE, when it is one). */
export class ReceptionRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly documento?: { index: number; tipoDte?: number; folio?: number },
  ) {
    super(message);
    this.name = 'ReceptionRefused';
  }
}

/** The XML text of `bytes` once it passed every gate above (nothing parsed it yet but xmldom here). */
export function screenXml(bytes: Buffer, limits: Partial<XmlLimits> = {}): { text: string; doc: Document } {
  const l = { ...DEFAULT_XML_LIMITS, ...limits };
  if (bytes.length > l.maxBytes)
    throw new ReceptionRefused(
      'tamano_excedido',
      `the file has ${bytes.length} bytes, more than ${l.maxBytes}`,
    );
  if (
    (bytes[0] === 0xfe && bytes[1] === 0xff) ||
    (bytes[0] === 0xff && bytes[1] === 0xfe) ||
    bytes.includes(0)
  )
    throw new ReceptionRefused(
      'codificacion_no_admitida',
      'UTF-16 or binary content: SII files are ISO-8859-1 or UTF-8',
    );
  const text = decode(bytes);
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text))
    throw new ReceptionRefused(
      'dtd_prohibido',
      'a document type or entity declaration is not admitted (no entity is expanded or fetched)',
    );
  if (/<[A-Za-z_][\w.-]*:include[\s/>]/.test(text) && /XInclude/.test(text))
    throw new ReceptionRefused('xinclude_prohibido', 'XInclude is not admitted');
  const pis = text.match(/<\?[\s\S]*?\?>/g) ?? [];
  if (pis.some((pi, i) => !(i === 0 && /^<\?xml\s/.test(pi) && text.trimStart().startsWith(pi))))
    throw new ReceptionRefused(
      'instruccion_prohibida',
      'processing instructions other than the XML declaration are not admitted',
    );
  checkStructure(text, l);
  let doc: Document;
  try {
    doc = new DOMParser({ onError: onErrorStopParsing }).parseFromString(text, 'text/xml');
  } catch (err) {
    throw new ReceptionRefused(
      'xml_mal_formado',
      `not well-formed XML: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  if (!doc.documentElement) throw new ReceptionRefused('xml_mal_formado', 'no root element');
  return { text, doc };
}

/** Counts start tags and their nesting without building anything. */
function checkStructure(text: string, l: XmlLimits): void {
  let depth = 0;
  let elements = 0;
  const tag = /<(\/?)([A-Za-z_][\w.:-]*)[^>]*?(\/?)>/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    if (m[1]) depth -= 1;
    else {
      elements += 1;
      if (!m[3]) depth += 1;
      if (depth > l.maxDepth || elements > l.maxElements)
        throw new ReceptionRefused(
          'estructura_excesiva',
          `more than ${l.maxDepth} levels or ${l.maxElements} elements`,
        );
    }
  }
}

function decode(bytes: Buffer): string {
  const head = bytes.subarray(0, 200).toString('latin1');
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(head)?.[1]?.toLowerCase();
  if (declared && declared !== 'utf-8' && declared !== 'utf8') return bytes.toString('latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    return bytes.toString('latin1');
  }
}
