import { expect } from 'chai';
import type Router from '@koa/router';
import { ApiError } from '@dte/error-catalog';
import { call, startTestApi, type TestApi } from './support/test-api';

describe('api http basics (real PostgreSQL and Redis, over HTTP)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let key: string;

  before(async () => {
    t = await startTestApi({
      deps: {
        // stand-ins for the emission routes of issue 6: non-JSON bodies and a crashing handler
        mountExtraRoutes: (router: Router, kit) => {
          router.get('/probe/xml', ...kit.chain({ auth: 'bearer', scope: 'dte:read' }), (ctx) => {
            ctx.type = 'application/xml';
            ctx.body = '<DTE/>';
          });
          router.get('/probe/pdf', ...kit.chain({ auth: 'bearer', scope: 'dte:read' }), (ctx) => {
            ctx.type = 'application/pdf';
            ctx.body = Buffer.from('%PDF-1.4\n%%EOF\n');
          });
          router.get('/probe/zip', ...kit.chain({ auth: 'bearer', scope: 'dte:read' }), (ctx) => {
            ctx.type = 'application/zip';
            ctx.body = Buffer.from('PK\x05\x06' + '\0'.repeat(18), 'binary');
          });
          router.get('/probe/crash', () => {
            throw new Error('password=hunter2 at /srv/secret/db.ts:42');
          });
          router.get('/probe/undocumented', () => {
            throw new ApiError('not.in.catalog', 'should never leak');
          });
        },
      },
    });
    key = (await t.seed()).api_key;
  });
  after(async () => t?.close());

  it('answers an unknown route with 404 not_found in the envelope, with X-Request-Id', async () => {
    const res = await call(t.url, 'GET', '/no/such/route', { key });
    expect(res.status).to.equal(404);
    expect(res.body).to.include({ code: 'not_found' });
    expect(res.body.request_id).to.match(/^req_[0-9a-f-]{36}$/);
    expect(res.headers.get('x-request-id')).to.equal(res.body.request_id);
    expect(res.body.docs_url).to.equal(`${t.config.publicBaseUrl}/errors#error-not_found`);
    expect(res.body).to.not.have.property('next_action');
    const outside = await fetch(t.url.replace('/api/v1', '/elsewhere'));
    expect(outside.status).to.equal(404);
    expect(outside.headers.get('x-request-id')).to.match(/^req_/);
  });

  it('gives every response its own X-Request-Id, including XML, PDF, ZIP and HTML bodies', async () => {
    const ids = new Set<string>();
    for (const [path, type] of [
      ['/probe/xml', 'application/xml'],
      ['/probe/pdf', 'application/pdf'],
      ['/probe/zip', 'application/zip'],
    ]) {
      const res = await call(t.url, 'GET', path, { key });
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type')).to.contain(type);
      ids.add(res.headers.get('x-request-id')!);
    }
    const html = await fetch(`${t.url}/errors`, { headers: { Accept: 'text/html' } });
    expect(html.headers.get('content-type')).to.contain('text/html');
    ids.add(html.headers.get('x-request-id')!);
    const spec = await call(t.url, 'GET', '/openapi.json');
    ids.add(spec.headers.get('x-request-id')!);
    expect([...ids].every((id) => /^req_/.test(id))).to.equal(true);
    expect(ids.size).to.equal(5);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await call(t.url, 'POST', '/caf/request', { key, raw: '{"tipo_dte": 33,' });
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'invalid_json', next_action: 'fix_json_body_and_retry' });
    expect(res.headers.get('x-request-id')).to.equal(res.body.request_id);
    const notJson = await call(t.url, 'POST', '/caf/request', {
      key,
      raw: 'tipo_dte=33',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(notJson.status).to.equal(400);
    expect(notJson.body.code).to.equal('invalid_json');
  });

  it('answers a body that fails its schema with validation_failed and one issue per problem', async () => {
    const res = await call(t.url, 'POST', '/caf/request', { key, json: { tipo_dte: 99, extra: 1 } });
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'validation_failed', next_action: 'fix_body_and_retry' });
    const paths = (res.body.issues as { path: string }[]).map((i) => i.path).sort();
    expect(paths).to.deep.equal(['/cantidad', '/extra', '/tipo_dte']);
  });

  it('answers 500 internal_error without internals, also for an undocumented code', async () => {
    for (const path of ['/probe/crash', '/probe/undocumented']) {
      const res = await call(t.url, 'GET', path);
      expect(res.status).to.equal(500);
      expect(Object.keys(res.body).sort()).to.deep.equal(['code', 'docs_url', 'message', 'request_id']);
      expect(res.body.code).to.equal('internal_error');
      expect(res.text).to.not.match(/hunter2|secret|db\.ts|never leak|not\.in\.catalog|stack/i);
    }
  });

  it('serves the catalog page that docs_url points into', async () => {
    const res = await call(t.url, 'GET', '/errors', { headers: { Accept: 'application/json' } });
    const rows = (res.body as { data: { code: string; anchor: string; http: number }[] }).data;
    expect(rows.find((r) => r.code === 'cert.kms.auth_failed')).to.include({
      anchor: 'error-cert-kms-auth_failed',
      http: 422,
    });
    const html = await (await fetch(`${t.url}/errors`)).text();
    expect(html).to.contain('id="error-rate_limit"');
  });
});
