import { ApiError } from '@dte/error-catalog';

/**
 * The opaque keyset cursor of GET /dtes: the sort key and id of the last row of a page, bound to
 * the sort and dir it was made for. base64url of JSON; anything else, or a cursor used with
 * another sort/dir, is dte.list.cursor_invalido.
 */
export interface ListCursor {
  sort: string;
  dir: 'asc' | 'desc';
  /** the last row's sort value in its exact text form */
  value: string;
  id: string;
}

export function encodeCursor(c: ListCursor): string {
  return Buffer.from(JSON.stringify({ s: c.sort, d: c.dir, v: c.value, i: c.id }), 'utf8').toString(
    'base64url',
  );
}

const invalid = (why: string) =>
  new ApiError(
    'dte.list.cursor_invalido',
    `The cursor is not valid here: ${why}. Start again without cursor.`,
  );

export function decodeCursor(raw: string, sort: string, dir: 'asc' | 'desc'): ListCursor {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid('malformed');
  }
  const p = parsed as { s?: unknown; d?: unknown; v?: unknown; i?: unknown };
  if (
    !p ||
    typeof p !== 'object' ||
    typeof p.s !== 'string' ||
    (p.d !== 'asc' && p.d !== 'desc') ||
    typeof p.v !== 'string' ||
    typeof p.i !== 'string' ||
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(p.i)
  ) {
    throw invalid('malformed');
  }
  if (p.s !== sort || p.d !== dir) throw invalid(`it was made for sort=${p.s}&dir=${p.d}`);
  return { sort, dir, value: p.v, id: p.i };
}
