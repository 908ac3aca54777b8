import { Document, Element } from '@xmldom/xmldom';

import { childElements, firstChild, parseXml } from './xml/dom';

/**
 * An EnvioDTE (or EnvioBOLETA) read once, for a receiver that must first know the file is XML
 * (the SII's STATUS 7) and then verify it (verifyEnvioDte reads each DTE standalone, as the SII
 * does). Parsing the whole envelope and then every DTE again parsed each DTE's bytes twice.
 *
 * `readEnvio` parses each DTE's text (cutOutDtes) standalone, once, and the envelope with each DTE
 * replaced by an empty placeholder element (its "skeleton": prolog, root, Carátula, signature).
 * Every byte of the file is thus parsed by the same strict xmldom parse; the whole file is
 * well-formed when all these parts are, because:
 *   - each placeholder came out as an element child of SetDTE, so each DTE text sits in element
 *     content (not in a comment, CDATA, processing instruction or attribute value) and the parser
 *     reads it there from its `<DTE` to its `</DTE>`, the same tokens it read standalone;
 *   - nothing in scope around a DTE can change how its text parses: a DTE text that parses
 *     standalone binds every prefix it uses itself (xmldom refuses an unbound element or
 *     attribute prefix), so the envelope's bindings never apply inside it; and the file has no
 *     DOCTYPE, so no entity but the predefined ones and character references exists, inside or
 *     outside.
 * When any of this does not hold, or any part fails to parse, the whole file is parsed as one
 * document instead (what was done before), so the answer (a tree, or the parser's error) never
 * depends on which way was taken. The test (test/envio-read.test.ts) compares both ways on good
 * and broken envelopes.
 */
export interface ParsedEnvio {
  /** the envelope's text */
  text: string;
  /**
   * The envelope's tree. With `dtes`, it is the skeleton: the DTEs are NOT in it (each is an
   * empty placeholder child of SetDTE); read them from `dtes`.
   */
  document: Document;
  /** each DTE (in cutOutDtes order): its text and its standalone tree; absent: read from `document` */
  dtes?: { text: string; root: Element }[];
}

/** The literal text of every <DTE>…</DTE> element (DTEs do not nest). */
const DTE_TEXT = /<DTE(?=[\s>])[\s\S]*?<\/DTE>/g;

export function cutOutDtes(envelopeText: string): string[] {
  return envelopeText.match(DTE_TEXT) ?? [];
}

/** A name no DTE text or envelope may contain (checked), so the placeholders are only ours. */
const PLACEHOLDER = 'DTE.ReadStandalone';

/**
 * Parses an EnvioDTE/EnvioBOLETA text. Throws exactly when parseXml(text) throws (not
 * well-formed); the caller checks the root's name.
 */
export function readEnvio(text: string): ParsedEnvio {
  return readInParts(text) ?? { text, document: parseXml(text) };
}

function readInParts(text: string): ParsedEnvio | undefined {
  if (text.includes(PLACEHOLDER) || text.includes('<!DOCTYPE')) return undefined;
  const dteTexts: string[] = [];
  const skeleton: string[] = [];
  let last = 0;
  DTE_TEXT.lastIndex = 0;
  for (let m = DTE_TEXT.exec(text); m; m = DTE_TEXT.exec(text)) {
    dteTexts.push(m[0]);
    skeleton.push(text.slice(last, m.index), `<${PLACEHOLDER}/>`);
    last = m.index + m[0].length;
  }
  if (dteTexts.length === 0) return undefined;
  skeleton.push(text.slice(last));
  let document: Document;
  const dtes: { text: string; root: Element }[] = [];
  try {
    document = parseXml(skeleton.join(''));
    const root = document.documentElement;
    const set = root ? firstChild(root, 'SetDTE') : undefined;
    if (!set) return undefined;
    const holders = childElements(set).filter((c) => c.localName === PLACEHOLDER);
    if (holders.length !== dteTexts.length) return undefined;
    for (const dteText of dteTexts) {
      const dteRoot = parseXml(dteText).documentElement;
      if (!dteRoot) return undefined;
      dtes.push({ text: dteText, root: dteRoot });
    }
  } catch {
    return undefined;
  }
  return { text, document, dtes };
}
