/**
 * Small XML helpers shared by the SOAP and upload handlers: text escaping for the SII's
 * "escaped XML inside a string" replies, and namespace-agnostic element lookups on xmldom nodes.
 */
import { DOMParser, type Element, type Document, type Node } from '@xmldom/xmldom';

export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export class XmlParseError extends Error {}

/** Parses XML text; a well-formedness error throws XmlParseError (never a partial tree). */
export function parseXml(text: string): Document {
  const problems: string[] = [];
  const parser = new DOMParser({
    onError: (level, msg) => {
      if (level !== 'warning') problems.push(String(msg));
    },
  });
  let doc: Document;
  try {
    doc = parser.parseFromString(text, 'text/xml');
  } catch (err) {
    throw new XmlParseError((err as Error).message);
  }
  if (problems.length > 0 || !doc.documentElement)
    throw new XmlParseError(problems.join('; ') || 'no root element');
  return doc;
}

export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
}

/**
 * The elements below `node` (not itself) with this local name, in any namespace, in document
 * order: what getElementsByTagNameNS('*', localName) lists, without its live list. `first` stops
 * at the first one.
 */
export function descendants(node: Element | Document, localName: string, first = false): Element[] {
  const out: Element[] = [];
  // iterative preorder walk (no recursion: a deeply nested upload must not overflow the stack)
  let n: Node | null = node.firstChild;
  while (n) {
    if (n.nodeType === 1) {
      if ((n as Element).localName === localName) {
        out.push(n as Element);
        if (first) break;
      }
      if (n.firstChild) {
        n = n.firstChild;
        continue;
      }
    }
    while (n && n !== node && !n.nextSibling) n = n.parentNode;
    n = n && n !== node ? n.nextSibling : null;
  }
  return out;
}

export function findDescendant(el: Element | Document, localName: string): Element | undefined {
  return descendants(el, localName, true)[0];
}

/** Text of a direct child by local name, trimmed; undefined when absent. */
export function childText(el: Element, localName: string): string | undefined {
  const c = childElements(el).find((e) => e.localName === localName);
  return c ? (c.textContent ?? '').trim() : undefined;
}
