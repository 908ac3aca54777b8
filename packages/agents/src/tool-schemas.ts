import { loadHttpSchema, type JsonSchema } from '@dte/http-contract';

type Json = unknown;

function rewrite(node: Json, file: string, root: string, seen: Set<string>): Json {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, file, root, seen));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(node as Record<string, Json>)) {
    if (k === '$id' || k === '$schema') continue;
    if (k === '$ref' && typeof v === 'string') {
      const [target, pointer = ''] = v.split('#');
      const targetFile = target === '' ? file : target;
      if (targetFile !== root) seen.add(targetFile);
      out[k] = targetFile === root ? `#${pointer}` : `#/definitions/${targetFile}${pointer}`;
      continue;
    }
    out[k] = rewrite(v, file, root, seen);
  }
  return out;
}

/**
 * A schemas/http file as ONE self-contained JSON Schema (the form an MCP tool's inputSchema must
 * take): the file itself at the root, every file it references (transitively) under
 * `definitions/<file name>`, each `$ref` rewritten to point there. The validation of a tool's
 * arguments still runs against the original file (@dte/http-contract validate.ts), so REST and MCP accept
 * exactly the same bodies.
 */
export function bundledSchema(file: string): JsonSchema {
  const seen = new Set<string>();
  const root = rewrite(loadHttpSchema(file), file, file, seen) as Record<string, Json>;
  const definitions: Record<string, Json> = { ...((root.definitions as Record<string, Json>) ?? {}) };
  const done = new Set<string>();
  while ([...seen].some((f) => !done.has(f))) {
    for (const f of [...seen]) {
      if (done.has(f)) continue;
      done.add(f);
      definitions[f] = rewrite(loadHttpSchema(f), f, file, seen);
    }
  }
  return { ...root, definitions };
}
