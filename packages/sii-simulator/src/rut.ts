/**
 * RUT handling as the SII's forms and web services see it: a body of digits and a check digit
 * (módulo 11, `K` in upper case). The simulator stores RUTs in the Carátula form `12345678-9`
 * (no dots, no leading zeros) so that every comparison is between one spelling.
 */

export function checkDigit(body: number | string): string {
  const digits = String(body).replace(/^0+/, '');
  let sum = 0;
  let factor = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * factor;
    factor = factor === 7 ? 2 : factor + 1;
  }
  const rest = 11 - (sum % 11);
  return rest === 11 ? '0' : rest === 10 ? 'K' : String(rest);
}

/** `07880442-4`, `7.880.442-4` or body+dv → `7880442-4`; null when it is not a RUT. */
export function normalizeRut(rut: string): string | null {
  const m = /^0*([0-9.]+)-([0-9kK])$/.exec(rut.trim());
  if (!m) return null;
  const body = m[1].replace(/\./g, '').replace(/^0+/, '');
  if (!/^\d+$/.test(body)) return null;
  return `${body}-${m[2].toUpperCase()}`;
}

export function joinRut(body: string, dv: string): string | null {
  if (!/^\d{1,9}$/.test(body.trim()) || !/^[0-9kK]$/.test(dv.trim())) return null;
  return normalizeRut(`${body.trim()}-${dv.trim()}`);
}

/** true when the check digit matches the body */
export function isValidRut(rut: string): boolean {
  const n = normalizeRut(rut);
  if (!n) return false;
  const [body, dv] = n.split('-');
  return checkDigit(body) === dv;
}

export function splitRut(rut: string): { body: string; dv: string } {
  const [body, dv] = rut.split('-');
  return { body, dv };
}
