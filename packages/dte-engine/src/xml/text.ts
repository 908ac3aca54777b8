import { ServiceError } from '@dte/error-catalog';

/**
 * Text helpers for the XML the engine writes. Everything is written directly in the canonical
 * (inclusive C14N) form: start and end tags for every element, attributes in double quotes, text
 * escaped exactly as C14N escapes it (&amp; &lt; &gt; and CR as &#xD;). That way the bytes we
 * write are the bytes that get hashed, so no canonicalizer runs while signing.
 */

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' };
const ATTR_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '"': '&quot;',
  '\t': '&#x9;',
  '\n': '&#xA;',
  '\r': '&#xD;',
};

/** Latin-1 without the C0 controls XML 1.0 forbids (tab, LF and CR are allowed). */
const NOT_LATIN1_XML = /[^\x09\x0A\x0D\x20-\xFF]/;

export function escapeText(value: string): string {
  return value.replace(/[&<>\r]/g, (c) => TEXT_ESCAPES[c] as string);
}

export function escapeAttr(value: string): string {
  return value.replace(/[&<"\t\n\r]/g, (c) => ATTR_ESCAPES[c] as string);
}

/**
 * The documents travel as ISO-8859-1: a character outside it cannot be written. The input side
 * replaces or rejects such characters before a document reaches here; this is the last guard so
 * nothing is silently turned into '?'.
 */
export function assertLatin1(value: string, element: string): void {
  const m = NOT_LATIN1_XML.exec(value);
  if (m) {
    const char = m[0];
    throw new ServiceError(
      'dte.field_not_latin1',
      `${element} holds a character not representable in ISO-8859-1`,
      {
        detail: { element, char, codepoint: char.codePointAt(0), index: m.index },
      },
    );
  }
}

/**
 * Numbers as the XSD's decimal types want them: integers plainly, decimals without exponent and
 * without trailing zeros (at most 6 fraction digits, the widest SII decimal type, Dec12_6).
 */
export function formatNumber(value: number, element: string): string {
  if (!Number.isFinite(value)) {
    throw new ServiceError('validation_failed', `${element} is not a finite number`, {
      issues: [{ path: element, message: 'must be a finite number' }],
    });
  }
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  let s = value.toFixed(6);
  s = s.replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

/** `<name>value</name>` with the value escaped; strings are checked to be Latin-1. */
export function el(name: string, value: string | number): string {
  if (typeof value === 'number') return `<${name}>${formatNumber(value, name)}</${name}>`;
  assertLatin1(value, name);
  return `<${name}>${escapeText(value)}</${name}>`;
}

/** Formats a Date as the SII's local timestamp AAAA-MM-DDTHH:MM:SS in America/Santiago. */
export function siiTimestamp(date: Date): string {
  // formatting through Intl is slow next to the rest of a document: remember the last second
  const second = Math.floor(date.getTime() / 1000);
  if (second === lastStamp.second) return lastStamp.text;
  const text = formatSantiago(date);
  lastStamp = { second, text };
  return text;
}
let lastStamp = { second: NaN, text: '' };

function formatSantiago(date: Date): string {
  const parts = SANTIAGO.formatToParts(date);
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '00';
  const hour = get('hour') === '24' ? '00' : get('hour');
  return `${get('year')}-${get('month')}-${get('day')}T${hour}:${get('minute')}:${get('second')}`;
}

const SANTIAGO = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Santiago',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});
