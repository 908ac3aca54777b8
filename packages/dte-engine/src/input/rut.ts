/**
 * RUT (Rol Único Tributario): body digits, a dash and a check digit computed modulo 11 over the
 * body with the weights 2,3,4,5,6,7 repeated from the right; 11 maps to "0" and 10 to "K".
 */

const RUT_SHAPE = /^([0-9]{1,8})-([0-9Kk])$/;

/** The check digit of a RUT body ("12345678" or 12345678): "0"-"9" or "K". */
export function rutCheckDigit(body: number | string): string {
  const digits = String(body).replace(/^0+(?=\d)/, '');
  if (!/^[0-9]+$/.test(digits)) throw new TypeError(`RUT body must be digits, got "${String(body)}"`);
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * weight;
    weight = weight === 7 ? 2 : weight + 1;
  }
  const rest = 11 - (sum % 11);
  return rest === 11 ? '0' : rest === 10 ? 'K' : String(rest);
}

/** True when `rut` has the shape 1-8 digits, dash, check digit, and the check digit is right. */
export function isValidRut(rut: string): boolean {
  if (typeof rut !== 'string') return false;
  const m = RUT_SHAPE.exec(rut);
  if (!m) return false;
  return rutCheckDigit(m[1]) === m[2].toUpperCase();
}

/** The form the SII XML takes (RUTType `[0-9]+-([0-9]|K)`): no leading zeros, upper-case K. */
export function normalizeRut(rut: string): string {
  const m = /^0*(\d+)-([0-9Kk])$/.exec(rut.trim());
  return m ? `${m[1]}-${m[2].toUpperCase()}` : rut.trim().toUpperCase();
}
