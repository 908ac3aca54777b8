// The OpenAPI links of /openapi.json (services/api/src/openapi-links.ts): every create links to
// the reads and actions on what it created, each link names an operation the document has, and
// its `$response.body#/…` parameter names a property the create's response schema documents.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { CREATE_LINKS } from '../src/openapi-links';
import { orgWithCafs } from './dtes-fixtures';
import { call, startTestApi, type TestApi } from './support/test-api';

type Schema = Record<string, unknown>;
type Link = { operationId: string; parameters: Record<string, string> };
type Operation = {
  operationId: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { links?: Record<string, Link>; content?: Record<string, { schema: Schema }> }>;
};
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method, path, op })),
  );
}

/** The schema a JSON pointer of a response body lands on, following $ref, allOf and array items. */
function schemaAt(doc: Doc, schema: Schema | undefined, pointer: string): Schema | undefined {
  const deref = (s: Schema | undefined): Schema | undefined => {
    let cur = s;
    while (cur && typeof cur.$ref === 'string') {
      cur = doc.components.schemas[(cur.$ref as string).replace('#/components/schemas/', '')];
    }
    return cur;
  };
  let cur = deref(schema);
  for (const seg of pointer.split('/').slice(1)) {
    if (!cur) return undefined;
    if (/^\d+$/.test(seg)) {
      cur = deref(cur.items as Schema | undefined);
      continue;
    }
    const parts = [cur, ...((cur.allOf as Schema[] | undefined) ?? []).map(deref)];
    cur = deref(
      parts
        .map((p) => (p?.properties as Record<string, Schema> | undefined)?.[seg])
        .find((p) => p !== undefined),
    );
  }
  return cur;
}

/** Every problem of the document's links (empty when they are all sound). */
export function linkProblems(doc: Doc): string[] {
  const problems: string[] = [];
  const all = operations(doc);
  const byId = new Map(all.map((o) => [o.op.operationId, o]));
  for (const { method, path, op } of all) {
    for (const [status, res] of Object.entries(op.responses)) {
      for (const [name, link] of Object.entries(res.links ?? {})) {
        const where = `${method.toUpperCase()} ${path} ${status} links.${name}`;
        const target = byId.get(link.operationId);
        if (!target) {
          problems.push(`${where}: no operation ${link.operationId}`);
          continue;
        }
        const pathParams = (target.op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        if (pathParams.length === 0) problems.push(`${where}: ${link.operationId} takes no path parameter`);
        for (const param of pathParams) {
          const expr = link.parameters?.[param];
          if (!expr) {
            problems.push(`${where}: no value for ${link.operationId}'s path parameter ${param}`);
            continue;
          }
          const m = /^\$response\.body#(\/.*)$/.exec(expr);
          const schema = res.content?.['application/json']?.schema;
          if (!m || !schema) {
            problems.push(`${where}: ${expr} does not read the documented JSON body`);
            continue;
          }
          const prop = schemaAt(doc, schema, m[1]);
          if (!prop || prop.type !== 'string') {
            problems.push(`${where}: ${m[1]} is not a documented string property of the ${status} body`);
          }
        }
      }
    }
  }
  // every read/action on a collection's id (`/x/{id}…`) is linked from the collection's create (POST /x)
  for (const { method, path, op } of all) {
    const m = /^(.*)\/\{id\}(\/.*)?$/.exec(path);
    if (!m) continue;
    const create = doc.paths[m[1]]?.post;
    if (!create) continue;
    const linked = Object.entries(create.responses)
      .filter(([st]) => st === '201' || st === '202')
      .some(([, r]) => Object.values(r.links ?? {}).some((l) => l.operationId === op.operationId));
    if (!linked)
      problems.push(`POST ${m[1]} does not link to ${method.toUpperCase()} ${path} (${op.operationId})`);
  }
  return problems;
}

describe('OpenAPI links from each create to what it created', function () {
  this.timeout(60_000);
  let t: TestApi;
  let doc: Doc;

  before(async () => {
    // the flagged areas (boletas, BHE) on, so their routes are in the document too
    t = await startTestApi({ env: { BOLETAS_ENABLED: 'cert', BHE_ENABLED: 'cert' } });
    const res = await call<Doc>(t.url, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => t?.close());

  it('every create links to the reads and actions on its id, with a parameter its response documents', () => {
    expect(linkProblems(doc)).to.deep.equal([]);
    const ops = new Map(operations(doc).map((o) => [o.op.operationId, o.op]));
    for (const entry of CREATE_LINKS) {
      const from = ops.get(entry.from);
      expect(from, entry.from).to.not.equal(undefined);
      for (const status of entry.statuses) {
        const links = from!.responses[String(status)]?.links ?? {};
        expect(
          Object.values(links).map((l) => l.operationId),
          `${entry.from} ${status}`,
        ).to.deep.equal(entry.to);
      }
    }
    // the four the contract fuzzing leans on
    const emit = ops.get('emitDte')!;
    expect(emit.responses['202'].links!.GetDte).to.deep.include({
      operationId: 'getDte',
      parameters: { id: '$response.body#/id' },
    });
    expect(Object.keys(emit.responses['201'].links!)).to.include.members([
      'GetDteXml',
      'GetDtePdf',
      'DeriveDte',
    ]);
    expect(Object.keys(ops.get('createWebhook')!.responses['201'].links!)).to.have.members([
      'TestWebhook',
      'RotateWebhookSecret',
      'DeleteWebhook',
    ]);
    expect(ops.get('uploadCaf')!.responses['201'].links!.DeleteCaf.operationId).to.equal('deleteCaf');
    expect(Object.keys(ops.get('uploadCertificate')!.responses['201'].links!)).to.have.members([
      'ActivateCertificate',
      'DeleteCertificate',
    ]);
  });

  it('the documented POST /dtes examples are issued as they stand, and each link reads the document', async () => {
    const media = (
      doc.paths['/dtes'].post as unknown as {
        requestBody: {
          content: Record<string, { examples: Record<string, { value: { rut_emisor?: string } }> }>;
        };
      }
    ).requestBody.content['application/json'];
    const examples = Object.entries(media.examples);
    expect(examples.length).to.be.at.least(4);
    // the company of the examples' rut_emisor, with a CAF of each example's type
    const o = await orgWithCafs(t, { rut: '76086428-5', tipos: [33, 34, 46, 110] });
    for (const [name, { value }] of examples) {
      const res = await call<{ id: string }>(t.url, 'POST', '/dtes', {
        key: o.key,
        json: value,
        headers: { 'Idempotency-Key': randomUUID() },
      });
      expect(res.status, `${name}: ${res.text}`).to.equal(202);
      // the read links of the 202, followed as a client would (the XML and PDF exist once signed,
      // and no signer runs here)
      const links = doc.paths['/dtes'].post.responses['202'].links!;
      for (const link of [links.GetDte, links.GetDteEvents]) {
        const target = operations(doc).find((x) => x.op.operationId === link.operationId)!;
        const read = await call(t.url, 'GET', target.path.replace('{id}', res.body.id), { key: o.key });
        expect(read.status, `${name} ${link.operationId}`).to.equal(200);
      }
    }
    // POST /dtes/preview documents only the examples of the types it takes, and previews each
    const previewMedia = (
      doc.paths['/dtes/preview'].post as unknown as {
        requestBody: {
          content: Record<string, { examples: Record<string, { value: { tipo_dte: number } }> }>;
        };
      }
    ).requestBody.content['application/json'];
    const previews = Object.entries(previewMedia.examples);
    expect(previews.map(([, e]) => e.value.tipo_dte))
      .to.include(33)
      .and.not.include(110);
    for (const [name, { value }] of previews) {
      const res = await call(t.url, 'POST', '/dtes/preview', {
        key: o.key,
        json: value,
        headers: { Accept: 'application/json' },
      });
      expect(res.status, `preview ${name}: ${res.text}`).to.equal(200);
    }
  });

  it('the check finds a link to a missing operation, a pointer the response lacks and an unlinked read', () => {
    const broken = JSON.parse(JSON.stringify(doc)) as Doc;
    const links = broken.paths['/webhooks'].post.responses['201'].links!;
    links.TestWebhook.operationId = 'noSuchOperation';
    links.DeleteWebhook.parameters = { id: '$response.body#/webhook_id' };
    delete links.RotateWebhookSecret;
    const problems = linkProblems(broken);
    expect(problems.some((p) => p.includes('no operation noSuchOperation'))).to.equal(true);
    expect(problems.some((p) => p.includes('/webhook_id is not a documented'))).to.equal(true);
    expect(problems).to.include(
      'POST /webhooks does not link to POST /webhooks/{id}/rotate-secret (rotateWebhookSecret)',
    );
  });
});
