/**
 * Reading the SII's replies: bytes to text (they declare UTF-8 but may hold ISO-8859-1 bytes),
 * strict XML parsing (a well-formedness error is an error, never a partial tree) and
 * namespace-agnostic lookups, because the SII mixes prefixed (`SII:RESP_HDR`) and unprefixed
 * elements.
 */
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Text of a reply body: ISO-8859-1 when the XML declaration says so, else UTF-8, and
 * ISO-8859-1 when the bytes are not valid UTF-8 (the SII's replies sometimes are not).
 */
export function decodeBody(body: Buffer): string {
  const head = body.subarray(0, 100).toString('latin1');
  if (/^\s*<\?xml[^>]*encoding\s*=\s*["']ISO-8859-1["']/i.test(head)) return body.toString('latin1');
  try {
    return utf8.decode(body);
  } catch {
    return body.toString('latin1');
  }
}

export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export class XmlError extends Error {}

export function parseXml(text: string): Document {
  const problems: string[] = [];
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') problems.push(String(message));
    },
  });
  let doc: Document;
  try {
    doc = parser.parseFromString(text.replace(/^\uFEFF?\s+/, ''), 'text/xml');
  } catch (err) {
    throw new XmlError((err as Error).message);
  }
  if (problems.length > 0 || !doc.documentElement)
    throw new XmlError(problems.join('; ') || 'no root element');
  return doc;
}

export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
}

export function localName(el: Element): string {
  return el.localName ?? el.nodeName.replace(/^.*:/, '');
}

export function findChild(el: Element, name: string): Element | undefined {
  return childElements(el).find((c) => localName(c) === name);
}

/** First descendant (depth first) with this local name. */
export function findDescendant(el: Element, name: string): Element | undefined {
  for (const c of childElements(el)) {
    if (localName(c) === name) return c;
    const deeper = findDescendant(c, name);
    if (deeper) return deeper;
  }
  return undefined;
}

/** Trimmed text of a direct child, undefined when the child is absent. */
export function childText(el: Element, name: string): string | undefined {
  const c = findChild(el, name);
  return c ? (c.textContent ?? '').trim() : undefined;
}

/** True when the text looks like an HTML page rather than an XML reply. */
export function looksLikeHtml(text: string): boolean {
  return (
    /^\s*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text) ||
    /<html[\s>]/i.test(text.slice(0, 2000))
  );
}

export function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
