/**
 * The rows of an UPDATE/DELETE … RETURNING run through typeorm's `query`: PostgreSQL's driver
 * answers those as `[rows, affected]`, a SELECT or INSERT as the rows themselves.
 */
export function returnedRows<T = unknown>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  )
    return result[0] as T[];
  return result as T[];
}
