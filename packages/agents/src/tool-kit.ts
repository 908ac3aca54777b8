/** Helpers of the tool definitions: input schemas built from schemas/http and argument checks. */
import { ApiError } from '@dte/error-catalog';
import { validateBody, type JsonSchema } from '@dte/http-contract';
import { bundledSchema } from './tool-schemas';

/** An object schema whose property `bodyProp` is the (bundled) REST body schema `file`. */
export function withBody(
  file: string,
  bodyProp: string,
  extra: Record<string, unknown>,
  required: string[],
): JsonSchema {
  const { definitions, ...body } = bundledSchema(file);
  return {
    type: 'object',
    additionalProperties: false,
    required: [...required, bodyProp],
    properties: { ...extra, [bodyProp]: body },
    definitions,
  };
}

export function objectSchema(properties: Record<string, unknown>, required: string[] = []): JsonSchema {
  return { type: 'object', additionalProperties: false, required, properties };
}

/** Checks the non-body arguments (what REST takes from the path and headers). */
export function checkArgs(
  args: Record<string, unknown>,
  spec: Record<string, 'uuid' | 'key' | 'uuid?'>,
): void {
  const issues: { path: string; message: string }[] = [];
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  for (const [name, kind] of Object.entries(spec)) {
    const v = args[name];
    if (kind === 'uuid?' && v === undefined) continue;
    if (kind === 'key') {
      if (typeof v !== 'string' || v.trim() === '' || v.length > 255) {
        issues.push({ path: `/${name}`, message: 'should be a string of 1 to 255 characters' });
      }
    } else if (typeof v !== 'string' || !uuid.test(v)) {
      issues.push({ path: `/${name}`, message: 'should be a uuid' });
    }
  }
  if (issues.length) throw new ApiError('validation_failed', 'The tool arguments are not valid.', { issues });
}

/** Prefixes the issue paths of a body validated on its own with the tool argument holding it. */
export function validateNested(file: string, prop: string, args: Record<string, unknown>): void {
  try {
    validateBody(file, args[prop]);
  } catch (err) {
    if (err instanceof ApiError && err.issues) {
      throw new ApiError('validation_failed', err.message, {
        issues: err.issues.map((i) => ({ ...i, path: `/${prop}${i.path}` })),
      });
    }
    throw err;
  }
}
