import { ApiError } from '@dte/error-catalog';

/** 400 recepcion.query_invalid: a query of the inbox the spec does not admit. */
export function queryInvalid(message: string): ApiError {
  return new ApiError('recepcion.query_invalid', message);
}

/** The spec's query: cedida only `true`, page integer >= 1, pageSize integer 1-500. */
export function parseRecepcionQuery(q: Record<string, unknown>): {
  cedida: boolean;
  page: number;
  pageSize: number;
} {
  const one = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw queryInvalid(`${name} must be given once.`);
    return v;
  };
  const cedida = one('cedida');
  if (cedida !== undefined && cedida !== 'true') throw queryInvalid('cedida admits only `true`.');
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = one(name);
    if (raw === undefined) return def;
    if (!/^\d{1,9}$/.test(raw)) throw queryInvalid(`${name} must be an integer.`);
    const n = Number(raw);
    if (n < min || n > max) throw queryInvalid(`${name} must be between ${min} and ${max}.`);
    return n;
  };
  return {
    cedida: cedida === 'true',
    page: int('page', 1, 1, 1_000_000),
    pageSize: int('pageSize', 50, 1, 500),
  };
}
