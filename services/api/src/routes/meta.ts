import { CATALOG, docsAnchor } from '@dte/error-catalog';
import type { RouteDef } from '../context';

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** GET /openapi.json and GET /errors (the catalog page every docs_url points into). */
export function metaRoutes(openApi: () => unknown): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This OpenAPI 3.0.0 document',
      tag: 'meta',
      auth: 'none',
      responses: { 200: { description: 'the OpenAPI document' } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = openApi();
      },
    },
    {
      method: 'get',
      path: '/errors',
      operationId: 'getErrorCatalog',
      summary:
        'The error catalog: one row per code, anchored as in docs_url (HTML, or JSON on Accept: application/json)',
      tag: 'meta',
      auth: 'none',
      responses: { 200: { description: 'the catalog', contentType: 'text/html' } },
      errors: [],
      handler: async (ctx) => {
        if (ctx.accepts('html', 'json') === 'json') {
          ctx.body = {
            data: CATALOG.map((e) => ({
              code: e.code,
              http: e.http,
              next_action: e.nextAction,
              condition: e.condition,
              anchor: docsAnchor(e.code),
            })),
          };
          return;
        }
        const rows = CATALOG.map(
          (e) =>
            `<tr id="${docsAnchor(e.code)}"><td><code>${escapeHtml(e.code)}</code></td><td>${e.http}</td>` +
            `<td>${escapeHtml(e.nextAction ?? 'none')}</td><td>${escapeHtml(e.condition)}</td></tr>`,
        ).join('\n');
        ctx.type = 'text/html';
        ctx.body =
          '<!doctype html><html><head><meta charset="utf-8"><title>Error catalog</title></head><body>' +
          '<h1>Error catalog</h1><table><thead><tr><th>code</th><th>HTTP</th><th>next_action</th>' +
          `<th>condition</th></tr></thead><tbody>\n${rows}\n</tbody></table></body></html>`;
      },
    },
  ];
}
