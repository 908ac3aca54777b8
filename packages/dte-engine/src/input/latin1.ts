import { ServiceError } from '@dte/error-catalog';
import { Decimal } from './decimal';

/**
 * Texts go into an ISO-8859-1 XML. The spec: accents and the letter with tilde are fine;
 * typographic dashes, curly quotes, ellipsis and zero-width spaces are replaced by the server;
 * any other character outside ISO-8859-1 answers dte.field_not_latin1.
 */
const REPLACEMENTS: ReadonlyMap<number, string> = new Map([
  // typographic dashes -> hyphen-minus
  [0x2010, '-'], // hyphen
  [0x2011, '-'], // non-breaking hyphen
  [0x2012, '-'], // figure dash
  [0x2013, '-'], // en dash
  [0x2014, '-'], // em dash
  [0x2015, '-'], // horizontal bar
  [0x2212, '-'], // minus sign
  // curly quotes -> straight quotes
  [0x2018, "'"],
  [0x2019, "'"],
  [0x201a, "'"],
  [0x201b, "'"],
  [0x201c, '"'],
  [0x201d, '"'],
  [0x201e, '"'],
  [0x201f, '"'],
  // ellipsis -> three dots
  [0x2026, '...'],
  // zero-width spaces -> removed
  [0x200b, ''], // zero width space
  [0x200c, ''], // zero width non-joiner
  [0x200d, ''], // zero width joiner
  [0x2060, ''], // word joiner
  [0xfeff, ''], // zero width no-break space (BOM)
]);

/** Any character of REPLACEMENTS (built from it: one list). */
const TYPOGRAPHIC = new RegExp(
  `[${[...REPLACEMENTS.keys()].map((cp) => `\\u{${cp.toString(16)}}`).join('')}]`,
  'u',
);

/** Applies the spec's replacements; leaves every other character as it is. */
export function replaceTypographic(text: string): string {
  // most texts have none: answer them without rebuilding the string character by character
  if (!TYPOGRAPHIC.test(text)) return text;
  let out = '';
  for (const ch of text) {
    const rep = REPLACEMENTS.get(ch.codePointAt(0) as number);
    out += rep === undefined ? ch : rep;
  }
  return out;
}

/**
 * Characters an ISO-8859-1 XML 1.0 document can carry as text: tab, LF, CR, U+0020-U+007E and
 * U+00A0-U+00FF. The C0 controls are not XML characters and the C1 controls (U+007F-U+009F)
 * have no glyph in ISO-8859-1 (they come from mis-decoded Windows-1252): both are refused too.
 */
export function isLatin1TextChar(codepoint: number): boolean {
  return (
    codepoint === 0x09 ||
    codepoint === 0x0a ||
    codepoint === 0x0d ||
    (codepoint >= 0x20 && codepoint <= 0x7e) ||
    (codepoint >= 0xa0 && codepoint <= 0xff)
  );
}

/** A whole text of isLatin1TextChar characters (the same set). */
const LATIN1_TEXT = /^[\t\n\r\x20-\x7e\xa0-\xff]*$/;

function hexCodepoint(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The replacements applied character by character; dte.field_not_latin1 on the first other character. */
function replacedLatin1(value: string, field: string, element: string): string {
  let out = '';
  let index = 0;
  for (const ch of value) {
    const cp = ch.codePointAt(0) as number;
    const rep = REPLACEMENTS.get(cp);
    if (rep !== undefined) out += rep;
    else if (isLatin1TextChar(cp)) out += ch;
    else {
      throw new ServiceError(
        'dte.field_not_latin1',
        `${field} has the character ${hexCodepoint(cp)} at position ${index}, which ISO-8859-1 (the SII XML encoding) cannot represent`,
        { detail: { field, element, char: ch, codepoint: hexCodepoint(cp), index } },
      );
    }
    index++;
  }
  return out;
}

/**
 * The text as it goes into XML element `element`: replacements applied, then checked.
 * `field` names the input field (e.g. "items[0].nombre") in the error detail; `index` is the
 * position of the offending character in the text as sent, counted in characters (code points).
 */
export function xmlText(value: string, field: string, element: string, maxLength: number): string {
  // the usual text is Latin-1 already: nothing to replace or refuse, one UTF-16 unit a character
  const plain = LATIN1_TEXT.test(value);
  const out = plain ? value : replacedLatin1(value, field, element);
  const actualLength = plain ? out.length : [...out].length;
  if (actualLength > maxLength) {
    throw new ServiceError(
      'dte.field_too_long',
      `${field} has ${actualLength} characters as written to <${element}>, which holds at most ${maxLength}`,
      { detail: { field, element, maxLength, actualLength } },
    );
  }
  return out;
}

/** An integer element with an XSD totalDigits bound: too many digits is dte.field_too_long. */
export function xmlDigits(value: number, field: string, element: string, maxDigits: number): number {
  const actualLength = String(Math.abs(value)).length;
  if (actualLength > maxDigits) {
    throw new ServiceError(
      'dte.field_too_long',
      `${field} has ${actualLength} digits; <${element}> holds at most ${maxDigits}`,
      { detail: { field, element, maxLength: maxDigits, actualLength } },
    );
  }
  return value;
}

/** A decimal element with an XSD totalDigits bound (e.g. PesoBruto 10): too many digits is dte.field_too_long. */
export function xmlDecimal(value: number, field: string, element: string, totalDigits: number): number {
  const digits = Decimal.of(Math.abs(value))
    .toString()
    .replace('.', '')
    .replace(/^0+(?=\d)/, '');
  if (digits.length > totalDigits) {
    throw new ServiceError(
      'dte.field_too_long',
      `${field} has ${digits.length} digits; <${element}> holds at most ${totalDigits}`,
      {
        detail: { field, element, maxLength: totalDigits, actualLength: digits.length },
      },
    );
  }
  return value;
}
