/**
 * RUT handling as the SII's forms and web services see it: a body of digits and a check digit
 * (módulo 11, `K` in upper case). The simulator stores RUTs in the Carátula form `12345678-9`
 * (no dots, no leading zeros) so that every comparison is between one spelling.
 */

import { rutCheckDigit } from '@dte/engine';

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
  return rutCheckDigit(body) === dv;
}

export function splitRut(rut: string): { body: string; dv: string } {
  const [body, dv] = rut.split('-');
  return { body, dv };
}
