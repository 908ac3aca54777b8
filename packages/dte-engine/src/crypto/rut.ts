/** RUT text as the SII's RUTType writes it: digits, dash, check digit; no dots, no leading zeros, upper-case K. */
export function normalizeRut(raw: string): string | null {
  const m = /^\s*0*(\d{1,3}(?:\.?\d{3})*|\d+)-?([\dkK])\s*$/.exec(raw.trim());
  if (!m || !m[1]) return null;
  const digits = m[1].replace(/\./g, '').replace(/^0+/, '');
  if (!digits) return null;
  return `${digits}-${(m[2] as string).toUpperCase()}`;
}

/** Finds a RUT inside a longer text such as a subject CN ("JUAN PEREZ 12.345.678-5"). */
export function findRut(text: string): string | null {
  const m = /(\d{1,2}\.?\d{3}\.?\d{3}-[\dkK])(?![\dkK])/.exec(text);
  return m ? normalizeRut(m[1] as string) : null;
}
