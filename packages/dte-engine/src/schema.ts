import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { validateXML } from 'xmllint-wasm';

/**
 * Schema validation with libxml2: compiled to WebAssembly (xmllint-wasm), so no system binary is
 * needed, or the xmllint binary when there is one. The SII schemas are looked up, not vendored: env SII_SCHEMAS_DIR, else
 * ../shared/sii/schemas beside the repository root.
 */
const SCHEMA_FILES = ['EnvioDTE_v10.xsd', 'DTE_v10.xsd', 'SiiTypes_v10.xsd', 'xmldsignature_v10.xsd'];
/** EnvioBOLETA_v11.xsd defines its own boleta DTE; it imports only the signature schema. */
const BOLETA_SCHEMA_FILES = ['EnvioBOLETA_v11.xsd', 'xmldsignature_v10.xsd'];

/** Which envelope schema a file is validated against. */
export type EnvioSchema = 'EnvioDTE' | 'EnvioBOLETA';

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

const schemaCache = new Map<string, { fileName: string; contents: Uint8Array }[]>();

function schemaFiles(which: EnvioSchema = 'EnvioDTE'): { fileName: string; contents: Uint8Array }[] {
  const dir = schemasDir();
  const key = `${dir}|${which}`;
  let files = schemaCache.get(key);
  if (!files) {
    files = (which === 'EnvioBOLETA' ? BOLETA_SCHEMA_FILES : SCHEMA_FILES).map((f) => ({
      fileName: f,
      contents: new Uint8Array(readFileSync(path.join(dir, f))),
    }));
    schemaCache.set(key, files);
  }
  return files;
}

export type SchemaEngine = 'auto' | 'wasm' | 'system';

/**
 * Validates an EnvioDTE against EnvioDTE_v10.xsd. `engine`: 'wasm' always uses xmllint-wasm
 * (no binary needed, about a second per call: it starts a worker and compiles libxml2 each
 * time); 'system' the xmllint binary on PATH (tens of milliseconds); 'auto' (default, or env
 * DTE_SCHEMA_ENGINE) the binary when there is one, else wasm. Both are libxml2 with the same
 * schemas, so they give the same verdict.
 */
export async function validateEnvioSchema(
  xml: Buffer | string,
  opts: { engine?: SchemaEngine; schema?: EnvioSchema } = {},
): Promise<{ valid: boolean; errors: string[] }> {
  const which = opts.schema ?? 'EnvioDTE';
  const bytes = typeof xml === 'string' ? encodeAsDeclared(xml) : xml;
  const engine = opts.engine ?? (process.env.DTE_SCHEMA_ENGINE as SchemaEngine | undefined) ?? 'auto';
  const binary = engine === 'wasm' ? undefined : systemXmllint();
  if (engine === 'system' && !binary) throw new Error('xmllint is not on PATH');
  return binary ? validateWithBinary(binary, bytes, which) : validateWithWasm(bytes, which);
}

let xmllintPath: string | null | undefined;

function systemXmllint(): string | undefined {
  if (xmllintPath === undefined) {
    xmllintPath = null;
    for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, 'xmllint');
      try {
        accessSync(candidate, constants.X_OK);
        xmllintPath = candidate;
        break;
      } catch {
        // not in this directory
      }
    }
  }
  return xmllintPath ?? undefined;
}

function validateWithBinary(
  binary: string,
  bytes: Buffer,
  which: EnvioSchema,
): Promise<{ valid: boolean; errors: string[] }> {
  return new Promise((resolve, reject) => {
    const args = [
      '--noout',
      '--nonet',
      '--schema',
      path.join(schemasDir(), which === 'EnvioBOLETA' ? BOLETA_SCHEMA_FILES[0]! : SCHEMA_FILES[0]!),
      '-',
    ];
    const child = execFile(binary, args, { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      // 0 valid; 1 not well-formed; 3 invalid against the schema; anything else is a tool failure
      if (code !== 0 && code !== 1 && code !== 3) return reject(err ?? new Error(stderr));
      const errors = stderr
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && l !== '- validates' && l !== '- fails to validate');
      resolve({ valid: code === 0, errors });
    });
    child.stdin?.end(bytes);
  });
}

async function validateWithWasm(
  bytes: Buffer,
  which: EnvioSchema,
): Promise<{ valid: boolean; errors: string[] }> {
  const [main, ...preload] = schemaFiles(which);
  const contents = new Uint8Array(bytes);
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
