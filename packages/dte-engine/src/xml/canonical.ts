import { SII_NS } from './dte-xml';

/**
 * Fast path for the envelope's digest: a DTE written by this package is already in canonical
 * form, so the SetDTE's in-envelope C14N is its text with each DTE's (then redundant) default
 * namespace declaration dropped. This checker accepts only text that C14N would leave
 * unchanged — start and end tags without extra whitespace, attributes in canonical order with
 * canonical escapes, text with only &amp; &lt; &gt; &#xD;, no comments, PIs, CDATA, prefixes
 * or redundant namespace declarations. Anything else goes through the real canonicalizer.
 */
const TOKEN = /<(\/?)([A-Za-z_][\w.-]*)((?: [A-Za-z_][\w.:-]*="[^"<]*")*)>|<|>|&(?:amp|lt|gt|#xD);|&|\r/g;
const ATTR = / ([A-Za-z_][\w.:-]*)="([^"<]*)"/g;
const ATTR_VALUE_OK = /^(?:[^&\t\n\r>]|&(?:amp|lt|quot|#x9|#xA|#xD);)*$/;

export const DTE_START = `<DTE xmlns="${SII_NS}" version="1.0">`;

/**
 * The DTE's text as it reads canonically inside a parent whose default namespace is the SII's,
 * or undefined when the fast path cannot vouch for it.
 */
export function canonicalInEnvelope(dte: string): string | undefined {
  if (!dte.startsWith(DTE_START) || !dte.endsWith('</DTE>')) return undefined;
  const stack: { name: string; ns: string }[] = [];
  let ns = SII_NS;
  TOKEN.lastIndex = DTE_START.length;
  stack.push({ name: 'DTE', ns });
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(dte))) {
    const [tok, close, name, attrs] = m;
    if (name === undefined) {
      if (tok.startsWith('&') && tok.length > 1) continue; // canonical entity in text
      return undefined; // stray <, >, & or CR
    }
    if (close) {
      if (attrs) return undefined;
      const top = stack.pop();
      if (!top || top.name !== name) return undefined;
      ns = stack[stack.length - 1]?.ns ?? '';
      if (stack.length === 0)
        return m.index + tok.length === dte.length
          ? DTE_START_IN_ENVELOPE + dte.slice(DTE_START.length)
          : undefined;
      continue;
    }
    if (name.includes(':')) return undefined;
    let prev = '';
    let sawPlain = false;
    let elementNs = ns;
    ATTR.lastIndex = 0;
    let a: RegExpExecArray | null;
    while ((a = ATTR.exec(attrs ?? ''))) {
      const [, attrName, value] = a as unknown as [string, string, string];
      if (!ATTR_VALUE_OK.test(value)) return undefined;
      if (attrName === 'xmlns') {
        if (prev !== '' || value === ns) return undefined; // must come first and not be redundant
        elementNs = value;
        prev = 'xmlns';
        continue;
      }
      if (attrName.includes(':')) return undefined; // prefixes: leave them to the canonicalizer
      if (sawPlain && attrName <= prev) return undefined;
      sawPlain = true;
      prev = attrName;
    }
    stack.push({ name, ns: elementNs });
    ns = elementNs;
  }
  return undefined;
}

const DTE_START_IN_ENVELOPE = '<DTE version="1.0">';
