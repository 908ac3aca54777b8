import { DOMParser, Document, Element, Node, onErrorStopParsing } from '@xmldom/xmldom';

import { escapeAttr, escapeText } from './text';
// every xmldom parse in the process: end-tag RegExps built once, not per tag (see the module)
import './xmldom-grammar-cache';

/** Parses XML text, stopping at the first error or warning (no lenient recovery). */
export function parseXml(xml: string): Document {
  const doc = new DOMParser({ onError: onErrorStopParsing }).parseFromString(xml, 'text/xml');
  return doc;
}

export function childElements(node: Element): Element[] {
  const out: Element[] = [];
  const kids = (node as Element).childNodes;
  for (let i = 0; i < kids.length; i++) {
    const k = kids[i];
    if (k && k.nodeType === Node.ELEMENT_NODE) out.push(k as Element);
  }
  return out;
}

/** The first child element with this local name (what childElements(node).find(...) gives, without the array). */
export function firstChild(node: Element, localName: string): Element | undefined {
  const kids = node.childNodes;
  for (let i = 0; i < kids.length; i++) {
    const k = kids[i];
    if (k && k.nodeType === Node.ELEMENT_NODE && (k as Element).localName === localName) return k as Element;
  }
  return undefined;
}

/** Text of the child element at `path` (local names), or undefined when it is absent. */
export function childText(node: Element, ...path: string[]): string | undefined {
  let cur: Element | undefined = node as Element;
  for (const name of path) {
    cur = cur ? firstChild(cur, name) : undefined;
  }
  return cur ? (cur.textContent ?? '') : undefined;
}

/**
 * The element serialized the way the SII signs the TED's DD and the CAF's DA: no namespace
 * declarations, whitespace-only text between tags removed, everything else as C14N writes it
 * (attributes sorted, start and end tags, text escaped). Text inside values is kept as is.
 */
export function flatSerialize(node: Element): string {
  const out: string[] = [];
  writeFlat(node as Element, out);
  return out.join('');
}

function writeFlat(node: Element, out: string[]): void {
  const name = node.localName ?? node.nodeName;
  const attrs: [string, string][] = [];
  for (let i = 0; i < node.attributes.length; i++) {
    const a = node.attributes[i];
    if (!a || a.name === 'xmlns' || a.name.startsWith('xmlns:')) continue;
    attrs.push([a.localName ?? a.name, a.value]);
  }
  attrs.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  out.push(`<${name}${attrs.map(([k, v]) => ` ${k}="${escapeAttr(v)}"`).join('')}>`);
  const kids = node.childNodes;
  for (let i = 0; i < kids.length; i++) {
    const k = kids[i];
    if (!k) continue;
    if (k.nodeType === Node.ELEMENT_NODE) writeFlat(k as Element, out);
    else if (k.nodeType === Node.TEXT_NODE || k.nodeType === Node.CDATA_SECTION_NODE) {
      const data = (k as unknown as { data: string }).data;
      if (/^\s*$/.test(data) && hasElementSibling(node)) continue;
      out.push(escapeText(data));
    }
  }
  out.push(`</${name}>`);
}

function hasElementSibling(parent: Element): boolean {
  const kids = parent.childNodes;
  for (let i = 0; i < kids.length; i++) if (kids[i]?.nodeType === Node.ELEMENT_NODE) return true;
  return false;
}
