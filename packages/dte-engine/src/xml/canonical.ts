import { SII_NS } from './dte-xml';

/**
 * Inclusive C14N computed from text, for text that is already in canonical form — what this
 * package writes. `canonicalForm` accepts only markup that C14N leaves unchanged: start and end
 * tags without extra whitespace, attributes in canonical order with canonical escapes, text with
 * only &amp; &lt; &gt; &#xD;, no comments, PIs, CDATA, DOCTYPE, prefixes or empty xmlns. The one
 * rewrite it does is the namespace rule: a default namespace declaration equal to the one in
 * scope in the output is dropped, and the apex of a subset renders the default namespace it
 * inherits. Anything else returns undefined and the caller uses a real canonicalizer
 * (xml-crypto), so the shortcut never changes a result, only its cost.
 *
 * Sound for verification too: the digest compares the bytes presented with the bytes signed, so a
 * text accepted here is exactly the text that was signed.
 */
const TOKEN = /<(\/?)([A-Za-z_][\w.-]*)((?: [A-Za-z_][\w.:-]*="[^"<]*")*)>|<|>|&(?:amp|lt|gt|#xD);|&|\r/g;
const ATTR = / ([A-Za-z_][\w.:-]*)="([^"<]*)"/g;
const ATTR_VALUE_OK = /^(?:[^&\t\n\r>]|&(?:amp|lt|quot|#x9|#xA|#xD);)*$/;

export const DTE_START = `<DTE xmlns="${SII_NS}" version="1.0">`;

/**
 * C14N of the element `text` (one element, nothing around it) whose parent's default namespace is
 * `inheritedNs`. `apex`: the element is the apex of the canonicalized subset (its parent is not
 * rendered), so it renders the inherited default namespace; otherwise it sits inside a rendered
 * parent and a declaration repeating the inherited namespace is dropped.
 */
export function canonicalForm(text: string, inheritedNs: string, apex: boolean): string | undefined {
  if (!text.startsWith('<') || !text.endsWith('>')) return undefined;
  const out: string[] = [];
  let copiedTo = 0;
  const stack: { name: string; ns: string }[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(text))) {
    const [tok, close, name, attrs] = m;
    if (m.index === 0 && (name === undefined || close)) return undefined;
    if (stack.length === 0 && m.index > 0) return undefined; // something after the element closed
    if (name === undefined) {
      if (tok.length > 1) continue; // a canonical entity in text
      return undefined; // stray <, >, & or CR
    }
    if (close) {
      if (attrs) return undefined;
      const top = stack.pop();
      if (!top || top.name !== name) return undefined;
      if (stack.length === 0 && m.index + tok.length !== text.length) return undefined;
      continue;
    }
    if (name.includes(':')) return undefined;
    const parentNs = stack.length ? (stack[stack.length - 1] as { ns: string }).ns : inheritedNs;
    const isApex = stack.length === 0 && apex;
    let ns = parentNs;
    let declared = false;
    let prev = '';
    let seenPlain = false;
    ATTR.lastIndex = 0;
    let a: RegExpExecArray | null;
    while ((a = ATTR.exec(attrs ?? ''))) {
      const attrName = a[1] as string;
      const value = a[2] as string;
      if (!ATTR_VALUE_OK.test(value)) return undefined;
      if (attrName === 'xmlns') {
        if (seenPlain || declared || value === '') return undefined;
        declared = true;
        ns = value;
        continue;
      }
      if (attrName.includes(':')) return undefined; // prefixed names and declarations: real C14N
      if (seenPlain && attrName <= prev) return undefined;
      seenPlain = true;
      prev = attrName;
    }
    const tagStart = m.index;
    const nameEnd = tagStart + 1 + name.length;
    if (declared && !isApex && ns === parentNs) {
      // redundant declaration inside a rendered parent: C14N omits it
      const decl = ` xmlns="${ns}"`;
      out.push(text.slice(copiedTo, nameEnd));
      copiedTo = nameEnd + decl.length;
    } else if (!declared && isApex && parentNs !== '') {
      out.push(text.slice(copiedTo, nameEnd), ` xmlns="${parentNs}"`);
      copiedTo = nameEnd;
    }
    stack.push({ name, ns });
  }
  if (stack.length !== 0) return undefined;
  out.push(text.slice(copiedTo));
  return out.join('');
}

/** The DTE's canonical text inside a rendered parent in the SII namespace (the SetDTE). */
export function canonicalInEnvelope(dte: string): string | undefined {
  if (!dte.startsWith(DTE_START)) return undefined;
  return canonicalForm(dte, SII_NS, false);
}
