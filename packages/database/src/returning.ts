/**
 * The rows of an UPDATE/DELETE … RETURNING run through typeorm's `query`: PostgreSQL's driver
 * answers those as `[rows, affected]`, a SELECT or INSERT as the rows themselves.
 */
export function returnedRows<T = unknown>(result: unknown[]): T[] {
  return (Array.isArray(result[0]) ? result[0] : result) as T[];
}
