/**
 * Turns XML bytes into text honouring the declared encoding: SII files (CAF, EnvioDTE) are
 * ISO-8859-1; a file without a declaration is read as UTF-8 when it is valid UTF-8, else as
 * Latin-1 (CAF files often carry Latin-1 names with a bare `<?xml version="1.0"?>`).
 */
export function decodeXml(input: string | Buffer): string {
  if (typeof input === 'string') return input;
  const head = input.subarray(0, 200).toString('latin1');
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(head)?.[1]?.toLowerCase();
  if (declared && /^(iso-8859-1|latin1|iso_8859-1|windows-1252|cp1252)$/.test(declared)) {
    return input.toString('latin1');
  }
  if (declared && declared !== 'utf-8' && declared !== 'utf8') return input.toString('latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(input).replace(/^\uFEFF/, '');
  } catch {
    return input.toString('latin1');
  }
}

/** The text of the first `<name …>…</name>` element, byte for byte, or undefined. */
export function elementText(
  xml: string,
  name: string,
  from = 0,
): { text: string; start: number } | undefined {
  const open = new RegExp(`<${name}(?=[\\s>/])`, 'g');
  open.lastIndex = from;
  const m = open.exec(xml);
  if (!m) return undefined;
  const close = `</${name}>`;
  const end = xml.indexOf(close, m.index);
  if (end < 0) return undefined;
  return { text: xml.slice(m.index, end + close.length), start: m.index };
}
