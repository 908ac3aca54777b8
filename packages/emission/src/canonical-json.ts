import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal bodies hash equal whatever their layout. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    // the default sort orders strings by UTF-16 code units, as `<` does
    const keys = Object.keys(obj).sort();
    let out = '{';
    let first = true;
    for (const k of keys) {
      const v = obj[k];
      if (v === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value ?? null);
}

/** sha256 hex of the canonical JSON of an idempotent request's body. */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}
