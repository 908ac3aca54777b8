import { rutCheckDigit } from '@dte/engine';

/** RUT helpers of the api: `12.345.678-5` / `012345678-5` / `12345678-5` → `12345678-5`. */
export function normalizeRut(raw: string): string | null {
  const m = /^0*([0-9]{1,8})-?([0-9Kk])$/.exec(raw.replace(/\./g, '').trim());
  if (!m) return null;
  const [, body, dv] = m;
  return rutCheckDigit(body) === dv.toUpperCase() ? `${body}-${dv.toUpperCase()}` : null;
}
