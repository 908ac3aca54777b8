import { catalogEntry } from '@dte/error-catalog';
import type { RouteDef } from './context';
import { loadHttpSchema, type JsonSchema } from '@dte/http-contract';
import { responseLinks } from './openapi-links';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '@dte/emission';

const SCHEMA_SUFFIX = '.schema.json';

/** `caf-request.schema.json` → `CafRequest` */
export function componentName(file: string): string {
  return file
    .replace(SCHEMA_SUFFIX, '')
    .split(/[-_.]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/** Koa path → OpenAPI path: `/caf/:id` → `/caf/{id}` */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Copies schemas/http files into components.schemas, turning them into OpenAPI 3.0 Schema
 * Objects: `$schema`/`$id` dropped, `definitions` hoisted to `<File>_<name>` components, and
 * every `$ref` (`x.schema.json`, `x.schema.json#/definitions/y`, `#/definitions/y`) rewritten to
 * `#/components/schemas/…`. Files referenced by a file come along.
 */
class ComponentCollector {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly done = new Set<string>();

  ref(file: string): { $ref: string } {
    this.add(file);
    return { $ref: `#/components/schemas/${componentName(file)}` };
  }

  private add(file: string): void {
    if (this.done.has(file)) return;
    this.done.add(file);
    const raw = loadHttpSchema(file);
    const { definitions, ...rest } = raw as JsonSchema & { definitions?: Record<string, JsonSchema> };
    const base = componentName(file);
    this.schemas[base] = this.convert(rest, file);
    for (const [name, def] of Object.entries(definitions ?? {})) {
      this.schemas[`${base}_${name}`] = this.convert(def, file);
    }
  }

  private convert(node: unknown, file: string): JsonSchema {
    if (Array.isArray(node)) return node.map((n) => this.convert(n, file)) as unknown as JsonSchema;
    if (!node || typeof node !== 'object') return node as JsonSchema;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(node as JsonSchema)) {
      // x-examples of a body schema become its media type's examples (bodyExamples)
      if (k === '$schema' || k === '$id' || k === 'x-examples') continue;
      if (k === '$ref' && typeof v === 'string') {
        out.$ref = this.rewriteRef(v, file);
        continue;
      }
      out[k] = this.convert(v, file);
    }
    return out;
  }

  private rewriteRef(ref: string, file: string): string {
    const [target, pointer] = ref.split('#');
    const targetFile = target === '' ? file : target.split('/').pop()!;
    if (target !== '') this.add(targetFile);
    const base = componentName(targetFile);
    if (!pointer) return `#/components/schemas/${base}`;
    const m = /^\/definitions\/([^/]+)$/.exec(pointer);
    if (!m) throw new Error(`unsupported $ref ${ref} in ${file}`);
    return `#/components/schemas/${base}_${m[1]}`;
  }
}

const COMMON_AUTH_ERRORS = [
  'unauthorized',
  'invalid_api_key',
  'api_key_expired',
  'api_key_revoked',
  'forbidden',
  'rate_limit',
];
const SESSION_ERRORS = ['org.required', 'csrf_origin_mismatch', 'csrf_blocked'];
const JSON_BODY_ERRORS = ['invalid_json', 'validation_failed'];

/** Every catalog code a route may answer: its own, plus those of its authentication and body. */
export function routeErrorCodes(def: RouteDef): string[] {
  const codes = new Set<string>();
  if (def.auth !== 'none') COMMON_AUTH_ERRORS.forEach((c) => codes.add(c));
  if (def.auth === 'bearer_or_session' || def.auth === 'session') SESSION_ERRORS.forEach((c) => codes.add(c));
  if (def.auth === 'session_user')
    SESSION_ERRORS.filter((c) => c !== 'org.required').forEach((c) => codes.add(c));
  if (def.auth === 'session' || def.auth === 'session_user') {
    ['invalid_api_key', 'api_key_expired', 'api_key_revoked'].forEach((c) => codes.delete(c));
  }
  if (def.body?.kind === 'json') JSON_BODY_ERRORS.forEach((c) => codes.add(c));
  if (def.method !== 'get') codes.add('rate_limit'); // any write may be shed (http/inflight-limit.ts)
  def.errors.forEach((c) => codes.add(c));
  codes.add('internal_error');
  return [...codes];
}

/**
 * Named examples of a request body: the `x-examples` map of its schema file ({name: {summary,
 * value}}), the media type's `examples` in the document (OpenAPI 3.0 Schema Objects take one
 * `example` only). Each is a valid body; the api test of the route sends them.
 */
function bodyExamples(
  file: string,
  applies: (value: unknown) => boolean = () => true,
): Record<string, { summary: string; value: unknown }> | undefined {
  const all = (
    loadHttpSchema(file) as { 'x-examples'?: Record<string, { summary: string; value: unknown }> }
  )['x-examples'];
  if (!all) return undefined;
  const kept = Object.entries(all).filter(([, e]) => applies(e.value));
  return kept.length ? Object.fromEntries(kept) : undefined;
}

/**
 * A header the route cannot do without is documented as required: Idempotency-Key on the routes
 * that answer idempotency_key_missing when it is absent.
 */
function headerRequired(def: RouteDef, name: string): boolean {
  return name === 'Idempotency-Key' && def.errors.includes('idempotency_key_missing');
}

/** Idempotency-Key: 1-255 characters once trimmed (@dte/emission idempotency.ts, routes/webhooks.ts); others free text. */
function headerSchema(name: string): Record<string, unknown> {
  return name === 'Idempotency-Key'
    ? { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '\\S' }
    : { type: 'string' };
}

/** The OpenAPI 3.0.0 document of the api, built from the route table and schemas/http. */
export function buildOpenApi(routes: RouteDef[], opts: { serverUrl: string; catalogUrl: string }) {
  const c = new ComponentCollector();
  const errorRef = c.ref('error.schema.json');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) {
    const p = openApiPath(def.path);
    const parameters: unknown[] = [];
    for (const m of def.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
      parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    for (const [name, description] of Object.entries(def.headers ?? {})) {
      parameters.push({
        name,
        in: 'header',
        required: headerRequired(def, name),
        description,
        schema: headerSchema(name),
      });
    }
    const query = { ...(def.query ?? {}) };
    if ((def.auth === 'bearer_or_session' || def.auth === 'session') && !query.sii_env) {
      query.sii_env = {
        description: 'session only: environment to act in (default cert); an API key uses its own',
        schema: { type: 'string', enum: ['cert', 'prod'] },
      };
    }
    for (const [name, q] of Object.entries(query)) {
      parameters.push({ name, in: 'query', required: false, description: q.description, schema: q.schema });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(def.responses)) {
      const links = responseLinks(def.operationId, Number(status));
      responses[status] = {
        description: r.description,
        headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } },
        ...(r.schema
          ? { content: { [r.contentType ?? 'application/json']: { schema: c.ref(r.schema) } } }
          : {}),
        ...(links ? { links } : {}),
      };
    }
    const byStatus = new Map<number, string[]>();
    for (const code of routeErrorCodes(def)) {
      const http = catalogEntry(code)?.http;
      if (!http) throw new Error(`route ${def.operationId} names ${code}, which is not in the catalog`);
      byStatus.set(http, [...(byStatus.get(http) ?? []), code]);
    }
    for (const [status, codes] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: `error: ${codes.join(', ')}`,
        headers: {
          'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
          ...(status === 429 || codes.includes('sii_unavailable')
            ? { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds' } }
            : {}),
        },
        content: { 'application/json': { schema: errorRef } },
      };
    }
    const op: Record<string, unknown> = {
      operationId: def.operationId,
      summary: def.summary,
      tags: [def.tag],
      ...(parameters.length ? { parameters } : {}),
      responses,
      security:
        def.auth === 'none'
          ? []
          : def.auth === 'bearer'
            ? [{ bearer: [] }]
            : def.auth === 'bearer_or_session'
              ? [{ bearer: [] }, { session: [] }]
              : [{ session: [] }],
    };
    if (def.scope) op['x-required-scope'] = def.scope;
    if (def.roles) op['x-session-roles'] = def.roles;
    if (def.body) {
      const mediaType = def.body.kind === 'json' ? 'application/json' : 'multipart/form-data';
      const examples = bodyExamples(def.body.schema, def.body.examples);
      op.requestBody = {
        required: true,
        content: { [mediaType]: { schema: c.ref(def.body.schema), ...(examples ? { examples } : {}) } },
      };
    }
    paths[p] = { ...(paths[p] ?? {}), [def.method]: op };
  }
  return {
    openapi: '3.0.0',
    info: {
      title: 'DTE issuing service',
      version: '1.0.0',
      description: `Issues Chilean electronic tax documents. Error catalog: ${opts.catalogUrl}`,
    },
    servers: [{ url: opts.serverUrl }],
    paths,
    components: {
      schemas: c.schemas,
      headers: {
        XRequestId: {
          description: 'unique id of the request, on every response',
          schema: { type: 'string' },
        },
      },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key sk_cert_… or sk_prod_…' },
        session: { type: 'apiKey', in: 'cookie', name: 'dte_session', description: 'dashboard session' },
      },
    },
  };
}
