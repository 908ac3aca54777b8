import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { validateXML } from 'xmllint-wasm';

/**
 * Schema validation with libxml2 compiled to WebAssembly (xmllint-wasm), so no system binary
 * is needed. The SII schemas are looked up, not vendored: env SII_SCHEMAS_DIR, else
 * ../shared/sii/schemas beside the repository root.
 */
const SCHEMA_FILES = ['EnvioDTE_v10.xsd', 'DTE_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'];

export function schemasDir(): string {
  const candidates = [
    process.env.SII_SCHEMAS_DIR,
    // packages/dte-engine/src -> repository root -> ../shared/sii/schemas
    path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'sii', 'schemas'),
  ].filter((c): c is string => !!c);
  const found = candidates.find((dir) => existsSync(path.join(dir, 'EnvioDTE_v10.xsd')));
  if (!found) {
    throw new Error(`SII schemas not found (looked in ${candidates.join(', ')}); set SII_SCHEMAS_DIR`);
  }
  return found;
}

let schemaCache: { dir: string; files: { fileName: string; contents: Uint8Array }[] } | undefined;

function schemaFiles(): { fileName: string; contents: Uint8Array }[] {
  const dir = schemasDir();
  if (!schemaCache || schemaCache.dir !== dir) {
    schemaCache = {
      dir,
      files: SCHEMA_FILES.map((f) => ({
        fileName: f,
        contents: new Uint8Array(readFileSync(path.join(dir, f))),
      })),
    };
  }
  return schemaCache.files;
}

export async function validateEnvioSchema(
  xml: Buffer | string,
): Promise<{ valid: boolean; errors: string[] }> {
  const [main, ...preload] = schemaFiles();
  const contents = new Uint8Array(typeof xml === 'string' ? encodeAsDeclared(xml) : xml);
  const result = await validateXML({
    xml: [{ fileName: 'envio.xml', contents }],
    schema: [main as { fileName: string; contents: Uint8Array }],
    preload,
  });
  return {
    valid: result.valid,
    errors: result.errors.map((e) => e.rawMessage.trim()),
  };
}

/** Text back to the bytes its XML declaration names (ISO-8859-1 for SII files). */
function encodeAsDeclared(xml: string): Buffer {
  const declared = /^\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(xml)?.[1]?.toLowerCase();
  return Buffer.from(xml, declared && /8859-1|latin1/.test(declared) ? 'latin1' : 'utf8');
}
