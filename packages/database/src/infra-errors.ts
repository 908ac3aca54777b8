import { ApiError } from '@dte/error-catalog';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);

/**
 * Database failures that are the infrastructure's, not the request's, mapped to the catalog's
 * transient codes (503, retry with backoff): the connection pool had no free connection in time →
 * db.pool_exhausted; PostgreSQL unreachable, shutting down, or the connection lost →
 * db.unavailable. Anything else → undefined (a bug: internal_error).
 */
export function databaseError(err: unknown): ApiError | undefined {
  const e = err as {
    code?: string;
    message?: string;
    driverError?: { code?: string; message?: string };
  } | null;
  if (!e || typeof e !== 'object') return undefined;
  const code = e.driverError?.code ?? e.code ?? '';
  const message = e.driverError?.message ?? e.message ?? '';
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return new ApiError('db.pool_exhausted', 'The database is busy; retry with backoff.', { cause: err });
  }
  if (
    UNAVAILABLE_CODES.has(code) ||
    /^08/.test(code) ||
    ['57P01', '57P02', '57P03', '53300'].includes(code) ||
    /Connection terminated|connection is not established|Connection terminated unexpectedly/i.test(message)
  ) {
    return new ApiError('db.unavailable', 'The database is unavailable; retry with backoff.', { cause: err });
  }
  return undefined;
}
