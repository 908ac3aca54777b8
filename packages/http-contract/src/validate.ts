import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isValidRut } from '@dte/engine';
import Ajv from 'ajv';
import { ApiError } from '@dte/error-catalog';

/** schemas/http at the repository root: the JSON Schemas of HTTP bodies (and the OpenAPI source). */
export const HTTP_SCHEMAS_DIR = path.resolve(__dirname, '../../../schemas/http');

export type JsonSchema = Record<string, unknown>;

/** Loads one schema file of schemas/http by file name. */
export function loadHttpSchema(file: string): JsonSchema {
  return JSON.parse(readFileSync(path.join(HTTP_SCHEMAS_DIR, file), 'utf8')) as JsonSchema;
}

export function listHttpSchemas(): string[] {
  return readdirSync(HTTP_SCHEMAS_DIR).filter((f) => f.endsWith('.json'));
}

export const SCHEMA_ID_BASE = 'https://dte.local/schemas/http/';

let ajv: Ajv.Ajv | undefined;
const compiled = new Map<string, Ajv.ValidateFunction>();

/** One Ajv holding every schema of schemas/http by $id, so relative $refs between files resolve. */
function validator(): Ajv.Ajv {
  if (!ajv) {
    ajv = new Ajv({
      allErrors: true,
      format: 'full',
      nullable: true,
      jsonPointers: true,
      unknownFormats: ['binary'],
    });
    // format "rut": the spec's pattern plus the modulo-11 check digit
    ajv.addFormat('rut', isValidRut);
    for (const file of listHttpSchemas()) ajv.addSchema(loadHttpSchema(file));
  }
  return ajv;
}

/**
 * Compiles every schema of schemas/http now (the api calls it before it listens): compiling the
 * document schemas took the first POST /dtes after a start tens of milliseconds. Returns how many.
 */
export function compileHttpSchemas(): number {
  for (const file of listHttpSchemas()) schemaFunction(file);
  return compiled.size;
}

function schemaFunction(file: string): Ajv.ValidateFunction {
  let fn = compiled.get(file);
  if (!fn) {
    fn = validator().getSchema(SCHEMA_ID_BASE + file);
    if (!fn) throw new Error(`no schema ${file} in schemas/http`);
    compiled.set(file, fn);
  }
  return fn;
}

/**
 * Validates a body against a schemas/http file; a failure is 400 validation_failed with one
 * issue per problem (JSON pointer path and message).
 */
export function validateBody<T>(file: string, body: unknown): T {
  const fn = schemaFunction(file);
  if (fn(body)) return body as T;
  const issues = (fn.errors ?? []).map((e) => {
    const missing =
      e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
    const extra =
      e.keyword === 'additionalProperties'
        ? `/${(e.params as { additionalProperty: string }).additionalProperty}`
        : '';
    return { path: `${e.dataPath}${missing}${extra}` || '/', message: e.message ?? 'invalid' };
  });
  throw new ApiError('validation_failed', 'The body does not match the schema.', { issues });
}
