import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { validateXML } from 'xmllint-wasm';

import { ResidentValidator, ResidentValidatorGone } from './schema-resident';

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

export type SchemaEngine = 'auto' | 'wasm' | 'system' | 'resident';

/**
 * Validates an EnvioDTE against EnvioDTE_v10.xsd. `engine`: 'wasm' always uses xmllint-wasm
 * (no binary needed, about a second per call: it starts a worker and compiles libxml2 each
 * time); 'system' one xmllint process per call (the binary on PATH: ~10 ms to start and compile
 * the schemas, then the file); 'resident' one long-lived process for all calls
 * (schema-resident.ts: the system's libxml2, the xmllint binary's library, driven by python3's
 * ctypes, the schemas compiled once; its answers are xmllint's, byte for byte); 'auto' (default,
 * or env DTE_SCHEMA_ENGINE) 'resident' when the xmllint binary and python3 are on PATH, else
 * 'system' when the binary is, else wasm. A file the resident process could not answer (it
 * could not start, or died) is validated by the binary instead. All are libxml2 with the same
 * schemas, so they give the same verdict.
 */
export async function validateEnvioSchema(
  xml: Buffer | string,
  opts: { engine?: SchemaEngine; schema?: EnvioSchema } = {},
): Promise<{ valid: boolean; errors: string[] }> {
  const which = opts.schema ?? 'EnvioDTE';
  const bytes = typeof xml === 'string' ? encodeAsDeclared(xml) : xml;
  const engine = opts.engine ?? (process.env.DTE_SCHEMA_ENGINE as SchemaEngine | undefined) ?? 'auto';
  const binary = engine === 'wasm' ? undefined : onPath('xmllint');
  if ((engine === 'system' || engine === 'resident') && !binary) throw new Error('xmllint is not on PATH');
  if (!binary) return validateWithWasm(bytes, which);
  const resident = engine === 'resident' || engine === 'auto' ? residentValidator(engine) : undefined;
  if (resident) {
    try {
      return xmllintResult(await resident.validate(mainSchemaFile(which), bytes));
    } catch (err) {
      if (!(err instanceof ResidentValidatorGone)) throw err;
      // one death rejects all it had not answered with the same error: counted once
      if (err !== lastResidentFailure) residentFailures++;
      lastResidentFailure = err;
      // the file is judged all the same, by one xmllint process
    }
  }
  return validateWithBinary(binary, bytes, which);
}

let resident: ResidentValidator | undefined;
let residentFailures = 0;
let lastResidentFailure: Error | undefined;
/** after this many failures of the resident process, 'auto' stops using it (the binary remains) */
const RESIDENT_MAX_FAILURES = 3;

function residentValidator(engine: SchemaEngine): ResidentValidator | undefined {
  const python = onPath('python3');
  if (!python) {
    if (engine === 'resident') throw new Error('python3 is not on PATH');
    return undefined;
  }
  if (engine === 'auto' && residentFailures >= RESIDENT_MAX_FAILURES) return undefined;
  resident ??= new ResidentValidator(python);
  return resident;
}

/** Stops the resident validator process, if one runs (the next validation starts another). */
export function stopResidentSchemaValidator(): void {
  resident?.close();
  resident = undefined;
}

const onPathCache = new Map<string, string | null>();

function onPath(name: string): string | undefined {
  let found = onPathCache.get(name);
  if (found === undefined) {
    found = null;
    for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        found = candidate;
        break;
      } catch {
        // not in this directory
      }
    }
    onPathCache.set(name, found);
  }
  return found ?? undefined;
}

function mainSchemaFile(which: EnvioSchema): string {
  return path.join(schemasDir(), which === 'EnvioBOLETA' ? BOLETA_SCHEMA_FILES[0]! : SCHEMA_FILES[0]!);
}

/** xmllint's exit code and stderr as the verdict: 0 valid; 1 not well-formed; 3 invalid. */
function xmllintResult(a: { code: number; stderr: string }): { valid: boolean; errors: string[] } {
  // anything else (5: the schema did not compile) is a failure of the tool, not a verdict
  if (a.code !== 0 && a.code !== 1 && a.code !== 3)
    throw new Error(`xmllint exited with ${a.code}: ${a.stderr.trim()}`);
  const errors = a.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && l !== '- validates' && l !== '- fails to validate');
  return { valid: a.code === 0, errors };
}

function validateWithBinary(
  binary: string,
  bytes: Buffer,
  which: EnvioSchema,
): Promise<{ valid: boolean; errors: string[] }> {
  return new Promise((resolve, reject) => {
    const args = ['--noout', '--nonet', '--schema', mainSchemaFile(which), '-'];
    const child = execFile(binary, args, { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      // 0 valid; 1 not well-formed; 3 invalid against the schema; anything else is a tool failure
      if (code !== 0 && code !== 1 && code !== 3) return reject(err ?? new Error(stderr));
      resolve(xmllintResult({ code: code as number, stderr }));
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
