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

/**
 * The charset that names these XML bytes, for an HTTP Content-Type: what decodeXml reads them as.
 * A declared Latin-1 (or Windows-1252) is ISO-8859-1; a declared UTF-8 is UTF-8; without a
 * declaration, UTF-8 when the bytes are valid UTF-8 (the XML default), else ISO-8859-1. A
 * client that decodes the bytes by the header then reads the very text that was signed.
 */
export function xmlCharset(input: Buffer): 'ISO-8859-1' | 'UTF-8' {
  const head = input.subarray(0, 200).toString('latin1');
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(head)?.[1]?.toLowerCase();
  if (declared) return declared === 'utf-8' || declared === 'utf8' ? 'UTF-8' : 'ISO-8859-1';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(input);
    return 'UTF-8';
  } catch {
    return 'ISO-8859-1';
  }
}

/** `application/xml; charset=…` for these bytes (xmlCharset): every XML download uses it. */
export function xmlMediaType(input: Buffer): string {
  return `application/xml; charset=${xmlCharset(input)}`;
}
