/**
 * The SII's web services take a RUT as two fields: the body (digits only, no dots, no leading
 * zeros) and the check digit (K in upper case). Callers give RUTs as `12345678-9` (dots and
 * leading zeros tolerated); a malformed RUT or a wrong check digit is refused before anything
 * is sent.
 */
import { rutCheckDigit } from '@dte/engine';

export interface RutParts {
  body: string;
  dv: string;
}

/** `76.543.210-3` → { body: '76543210', dv: '3' }; throws RangeError for anything else. */
export function splitRut(rut: string, field: string): RutParts {
  const m = /^\s*0*((?:\d{1,3}(?:\.\d{3})+)|\d+)-([\dkK])\s*$/.exec(rut);
  const body = m?.[1]?.replace(/\./g, '');
  const dv = m?.[2]?.toUpperCase();
  if (!body || !dv || body.length > 9) throw new RangeError(`${field} is not a RUT: ${JSON.stringify(rut)}`);
  if (rutCheckDigit(body) !== dv)
    throw new RangeError(`${field} has a wrong check digit: ${JSON.stringify(rut)}`);
  return { body, dv };
}
