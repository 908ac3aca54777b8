import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import type { ValidationIssue } from '@dte/error-catalog';
import { isValidRut } from './rut';

/**
 * The repository's schemas/http: read at run time rather than imported, so that the package
 * compiles on its own (`tsc -b`: a JSON import would lie outside its rootDir). src/input and
 * dist/input sit at the same depth, so the same relative path serves tsx and the compiled build.
 */
const HTTP_SCHEMAS_DIR = path.resolve(__dirname, '..', '..', '..', '..', 'schemas', 'http');

/** A schema of schemas/http; each one names itself with `$id`, by which ajv finds it. */
export interface HttpJsonSchema {
  $id: string;
  [keyword: string]: unknown;
}

function httpSchema(file: string): HttpJsonSchema {
  return JSON.parse(readFileSync(path.join(HTTP_SCHEMAS_DIR, file), 'utf8')) as HttpJsonSchema;
}

/** The JSON Schemas of schemas/http, by shape (also the source of the OpenAPI document). */
export const emissionSchemas = {
  common: httpSchema('common.schema.json'),
  dte: httpSchema('dte-emission.schema.json'),
  guiaDespacho: httpSchema('dte-guia-despacho.schema.json'),
  export: httpSchema('dte-export.schema.json'),
  boleta: httpSchema('boleta-emission.schema.json'),
  request: httpSchema('dte-emission-request.schema.json'),
} as const;

export type EmissionShape = 'dte' | 'guiaDespacho' | 'export' | 'boleta';

/**
 * An ajv instance that understands the schemas: draft-07, OpenAPI's `nullable`, full date/e-mail
 * formats and the custom format `rut` (pattern plus modulo-11 check digit).
 */
export function createEmissionAjv(): Ajv.Ajv {
  const ajv = new Ajv({ allErrors: true, jsonPointers: true, nullable: true, format: 'full' });
  ajv.addFormat('rut', { type: 'string', validate: isValidRut });
  for (const schema of Object.values(emissionSchemas)) ajv.addSchema(schema);
  return ajv;
}

let compiled: Record<EmissionShape, Ajv.ValidateFunction> | undefined;
let perTipo: Map<number, Ajv.ValidateFunction> | undefined;

/**
 * Domestic types (33, 34, 46, 56, 61) have a branch of their own in
 * dte-emission-request.schema.json (`#/definitions/tipo_<n>`): the base shape plus the per-type
 * rules JSON Schema can say (33/34 receptor fields and forma_pago, notes' references, ...).
 */
export const TIPOS_WITH_OWN_BRANCH = [33, 34, 46, 56, 61] as const;

function validators(): Record<EmissionShape, Ajv.ValidateFunction> {
  if (!compiled) {
    const ajv = createEmissionAjv();
    const get = (id: string): Ajv.ValidateFunction => {
      const fn = ajv.getSchema(id);
      if (!fn) throw new Error(`schema ${id} not loaded`);
      return fn;
    };
    compiled = {
      dte: get(emissionSchemas.dte.$id),
      guiaDespacho: get(emissionSchemas.guiaDespacho.$id),
      export: get(emissionSchemas.export.$id),
      boleta: get(emissionSchemas.boleta.$id),
    };
    perTipo = new Map(
      TIPOS_WITH_OWN_BRANCH.map((t) => [t, get(`${emissionSchemas.request.$id}#/definitions/tipo_${t}`)]),
    );
  }
  return compiled;
}

/** "/items/0/nombre" -> "items[0].nombre" (the path style of issues[] and of detail.field). */
export function pointerToPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(seg)) path += `[${seg}]`;
    else path += path ? `.${seg}` : seg;
  }
  return path;
}

export function joinPath(parent: string, child: string): string {
  return parent ? `${parent}.${child}` : child;
}

function messageOf(err: Ajv.ErrorObject): string {
  const params = err.params as unknown as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
    case 'not':
      return 'is not a field of this document type';
    case 'format':
      if (params.format === 'rut') return 'is not a valid RUT (check digit modulo 11)';
      if (params.format === 'date') return 'must be a calendar date YYYY-MM-DD';
      return `must be a valid ${String(params.format)}`;
    case 'enum':
      return `must be one of ${JSON.stringify(params.allowedValues)}`;
    default:
      return (err.message ?? 'is invalid').replace(/^should/, 'must');
  }
}

/**
 * Validates `data` against one shape (for a domestic `tipo`, its own branch of the request
 * schema). One issue per field (the first error found for it); the branches of an anyOf are
 * merged into one message.
 */
export function schemaIssues(shape: EmissionShape, data: unknown, tipo?: number): ValidationIssue[] {
  const all = validators();
  const validate = (shape === 'dte' && tipo !== undefined && perTipo!.get(tipo)) || all[shape];
  if (validate(data)) return [];
  const byPath = new Map<string, string[]>();
  const anyOfBranches = new Map<string, string[]>();
  for (const err of validate.errors ?? []) {
    const params = err.params as unknown as Record<string, unknown>;
    let path = pointerToPath(err.dataPath);
    if (err.keyword === 'required') path = joinPath(path, String(params.missingProperty));
    if (err.keyword === 'additionalProperties') path = joinPath(path, String(params.additionalProperty));
    if (/\/anyOf\/\d+\//.test(err.schemaPath)) {
      const list = anyOfBranches.get(path) ?? [];
      list.push(messageOf(err));
      anyOfBranches.set(path, list);
      continue;
    }
    if (err.keyword === 'anyOf') {
      byPath.set(path, [(anyOfBranches.get(path) ?? ['must match one of the allowed forms']).join(' or ')]);
      continue;
    }
    if (!byPath.has(path)) byPath.set(path, [messageOf(err)]);
  }
  return [...byPath].map(([path, messages]) => ({ path, message: messages[0] }));
}
