/** RUT helpers of the api: `12.345.678-5` / `012345678-5` / `12345678-5` → `12345678-5`. */
export function normalizeRut(raw: string): string | null {
  const m = /^0*([0-9]{1,8})-?([0-9Kk])$/.exec(raw.replace(/\./g, '').trim());
  if (!m) return null;
  const [, body, dv] = m;
  return checkDigit(body) === dv.toUpperCase() ? `${body}-${dv.toUpperCase()}` : null;
}

/** Modulo 11 check digit of a RUT body. */
export function checkDigit(body: string): string {
  let sum = 0;
  let factor = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * factor;
    factor = factor === 7 ? 2 : factor + 1;
  }
  const r = 11 - (sum % 11);
  return r === 11 ? '0' : r === 10 ? 'K' : String(r);
}
