/**
 * Issue 15 end to end, with the MCP SDK's own client and OAuth client provider: an agent
 * registers itself (RFC 7591), the user authorizes it with PKCE S256 on the consent page driven
 * by headless Chromium (signed in to the dashboard through its session cookie), the agent gets
 * tokens, lists the tools, issues an invoice through `emitir_dte` and the document reaches EPR
 * over the real pipeline (relay, signer, uploader, poller, projector, SII simulator); an annulment
 * waits as a pending action until the user approves it; the refresh token rotates, and reusing
 * the old one revokes the whole family. Bad inputs are answered with OAuth errors and do nothing.
 */
import { expect } from 'chai';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  UnauthorizedError,
  discoverAuthorizationServerMetadata,
  refreshAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { chromium, type Browser } from 'playwright-core';
import { body } from '../../services/api/test/dtes-fixtures';
import { call, dashboardMember, DASHBOARD_ORIGIN } from '../../services/api/test/support/test-api';
import { eventually, startPipeline, type Pipeline } from '../pipeline/harness';
import { freePort } from '../support/pipeline-harness';
import { AgentOAuth, CHROMIUM_ARGS, callbackServer, consentInBrowser } from './oauth-agent';

describe('MCP server behind OAuth 2.1 (issue 15)', function () {
  this.timeout(300_000);
  let p: Pipeline;
  let origin: string;
  let mcpUrl: string;
  let browser: Browser;
  let cb: Awaited<ReturnType<typeof callbackServer>>;
  let cookie: string;
  let userId: string;
  const agent = () => new AgentOAuth(cb.url, 'dte:read dte:write empresas:read certificates:read');
  let main: AgentOAuth;
  let invoiceId: string;

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    mcpUrl = `${origin}/mcp`;
    p = await startPipeline({ api: { port, env: { PUBLIC_BASE_URL: `${origin}/api/v1` } }, tipos: [33, 61] });
    ({ userId, cookie } = await dashboardMember(p.t, p.o.orgId, 'owner', {
      email: `agente-${randomUUID()}@example.cl`,
    }));
    cb = await callbackServer();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    cb?.close();
    await p?.close();
  });

  /** The user, signed in to the dashboard, approves the consent page; returns the code. */
  const consent = (url: URL, opts: { expectScopes?: string[]; grant?: string[] } = {}) =>
    consentInBrowser(browser, { origin, cookie, cb }, url, opts);

  async function connectedClient(a: AgentOAuth): Promise<Client> {
    const client = new Client({ name: 'agente-prueba', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a }));
    return client;
  }

  it('without a token /mcp answers 401 pointing at the protected-resource metadata; metadata advertise S256 only', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).to.equal(401);
    const www = res.headers.get('www-authenticate')!;
    expect(www).to.match(/^Bearer /);
    expect(www).to.contain(`resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`);
    const prm = (await (await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm).to.include({ resource: mcpUrl });
    expect(prm.authorization_servers).to.deep.equal([origin]);
    const as = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).to.include({
      issuer: origin,
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      revocation_endpoint: `${origin}/oauth/revoke`,
    });
    expect(as.code_challenge_methods_supported).to.deep.equal(['S256']);
    const bad = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer not-a-token' },
      body: '{}',
    });
    expect(bad.status).to.equal(401);
    expect(bad.headers.get('www-authenticate')).to.contain('error="invalid_token"');
  });

  it('registers dynamically, authorizes with PKCE S256 through the consent page, and lists the tools (no webhook tools)', async () => {
    main = agent();
    const first = new Client({ name: 'agente-prueba', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: main });
    let thrown: unknown;
    await first.connect(transport).catch((e) => (thrown = e));
    expect(thrown).to.be.instanceOf(UnauthorizedError);
    expect(main.info?.client_id, 'dynamic registration').to.be.a('string');
    const authUrl = main.authorizationUrl!;
    expect(authUrl.origin + authUrl.pathname).to.equal(`${origin}/oauth/authorize`);
    expect(authUrl.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authUrl.searchParams.get('resource')).to.equal(mcpUrl);

    // the SDK asks for every scope the resource lists; the user grants four of them
    const code = await consent(authUrl, {
      expectScopes: [
        'dte:read',
        'rcv:read',
        'empresas:read',
        'certificates:read',
        'billing:read',
        'recepcion:read',
        'dte:write',
        'recepcion:write',
      ],
      grant: ['dte:read', 'dte:write', 'empresas:read', 'certificates:read'],
    });
    await transport.finishAuth(code);
    expect(main.saved?.access_token).to.be.a('string');
    expect(main.saved?.refresh_token).to.be.a('string');
    expect(main.saved?.scope?.split(' ').sort()).to.deep.equal([
      'certificates:read',
      'dte:read',
      'dte:write',
      'empresas:read',
    ]);

    const client = await connectedClient(main);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).to.include.members([
      'emitir_dte',
      'derivar_dte',
      'obtener_dte',
      'listar_dtes',
      'eventos_dte',
      'totales_dte',
      'consultar_accion_pendiente',
    ]);
    expect(names.filter((n) => /webhook/i.test(n))).to.deep.equal([]);
    // the emission tool's document is the REST body's schema
    const emit = tools.find((t) => t.name === 'emitir_dte')!;
    expect((emit.inputSchema.properties as Record<string, { title?: string }>).documento.title).to.equal(
      'POST /dtes body as the route receives it',
    );
    const empresa = await client.callTool({ name: 'obtener_empresa', arguments: {} });
    expect(empresa.isError).to.equal(false);
    expect(empresa.structuredContent).to.include({ rut: p.o.rut, sii_env: 'cert' });
    const branches = await client.callTool({ name: 'listar_sucursales', arguments: {} });
    const rest = await call(p.t.url, 'GET', '/sucursales', { key: p.o.key });
    expect(branches.structuredContent).to.deep.equal(rest.body);
    await client.close();
  });

  it('issues an invoice through emitir_dte and it reaches EPR over the real pipeline; the call is audited', async () => {
    const client = await connectedClient(main);
    const res = await client.callTool({
      name: 'emitir_dte',
      arguments: {
        idempotency_key: randomUUID(),
        certificate_id: p.o.certId,
        documento: body(33, p.o.rut, 25000),
      },
    });
    expect(res.isError, JSON.stringify(res.structuredContent)).to.equal(false);
    const doc = res.structuredContent as { id: string; tipo_dte: number; folio: number };
    expect(doc.tipo_dte).to.equal(33);
    invoiceId = doc.id;
    // the API key of the same company sees it (same organization, company and environment)
    await eventually(`${doc.id} at EPR`, async () => {
      const r = await call(p.t.url, 'GET', `/dtes/${doc.id}`, { key: p.o.key });
      return r.body.sii_status === 'EPR' ? r.body : undefined;
    });
    const seen = await client.callTool({ name: 'obtener_dte', arguments: { id: doc.id } });
    expect(seen.structuredContent).to.include({ id: doc.id, sii_status: 'EPR' });

    // bad input: the same validation as REST, nothing issued
    const before = await p.t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes');
    const bad = await client.callTool({
      name: 'emitir_dte',
      arguments: { idempotency_key: randomUUID(), documento: { ...body(33, p.o.rut), items: [] } },
    });
    expect(bad.isError).to.equal(true);
    expect((bad.structuredContent as { code: string }).code).to.be.oneOf([
      'items_empty',
      'validation_failed',
    ]);
    const after = await p.t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes');
    expect(after[0].n).to.equal(before[0].n);

    const audit: { tool: string; outcome: string; error_code: string | null }[] =
      await p.t.db.dataSource.query(`SELECT tool, outcome, error_code FROM mcp_audit_log ORDER BY id`);
    expect(audit.map((a) => `${a.tool}:${a.outcome}`)).to.include.members([
      'obtener_empresa:ok',
      'emitir_dte:ok',
      'obtener_dte:ok',
      'emitir_dte:error',
    ]);
    await client.close();
  });

  it('an annulment waits as a pending action until the user approves it in the dashboard', async () => {
    const client = await connectedClient(main);
    const count = async () =>
      (await p.t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes'))[0].n as number;
    const n0 = await count();
    const res = await client.callTool({
      name: 'derivar_dte',
      arguments: {
        id: invoiceId,
        idempotency_key: randomUUID(),
        certificate_id: p.o.certId,
        derivacion: { action: 'anular', razon_ref: 'Anula factura por error en pedido' },
      },
    });
    expect(res.isError, JSON.stringify(res.structuredContent)).to.equal(false);
    const pending = (res.structuredContent as { pending_action: { id: string; status: string } })
      .pending_action;
    expect(pending.status).to.equal('pending');
    expect(await count(), 'nothing issued before approval').to.equal(n0);

    const state = await client.callTool({
      name: 'consultar_accion_pendiente',
      arguments: { id: pending.id },
    });
    expect(
      (state.structuredContent as { pending_action: { status: string } }).pending_action.status,
    ).to.equal('pending');
    const missing = await client.callTool({
      name: 'consultar_accion_pendiente',
      arguments: { id: randomUUID() },
    });
    expect(missing.isError).to.equal(true);
    expect((missing.structuredContent as { code: string }).code).to.equal('pending_action_not_found');

    // an API key cannot approve; the user's session can
    const withKey = await call(p.t.url, 'POST', `/pending-actions/${pending.id}/approve`, { key: p.o.key });
    expect(withKey.status).to.equal(403);
    expect(await count()).to.equal(n0);
    const session = { Cookie: `dte_session=${cookie}`, Origin: DASHBOARD_ORIGIN };
    const approved = await fetch(`${p.t.url}/pending-actions/${pending.id}/approve`, {
      method: 'POST',
      headers: session,
    });
    const ab = (await approved.json()) as {
      pending_action: { status: string; result: { id: string; tipo_dte: number } };
    };
    expect(approved.status, JSON.stringify(ab)).to.equal(200);
    expect(ab.pending_action.status).to.equal('approved');
    expect(ab.pending_action.result.tipo_dte).to.equal(61);
    expect(await count()).to.equal(n0 + 1);
    // a second approval runs nothing again
    const again = await fetch(`${p.t.url}/pending-actions/${pending.id}/approve`, {
      method: 'POST',
      headers: session,
    });
    expect(again.status).to.equal(200);
    expect(await count()).to.equal(n0 + 1);
    const unknown = await fetch(`${p.t.url}/pending-actions/${randomUUID()}/reject`, {
      method: 'POST',
      headers: session,
    });
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as { code: string }).code).to.equal('pending_action_not_found');
    await client.close();
  });

  it("applies the company's per-minute MCP emission cap per connection; an invalid cap value is refused; nothing issued", async () => {
    const db = p.t.db.dataSource;
    const client = await connectedClient(main);
    const count = async () => (await db.query('SELECT count(*)::int AS n FROM dtes'))[0].n as number;
    const emit = () =>
      client.callTool({
        name: 'emitir_dte',
        arguments: {
          idempotency_key: randomUUID(),
          certificate_id: p.o.certId,
          documento: body(33, p.o.rut, 1000),
        },
      });
    await db.query(`UPDATE companies SET mcp_rate_limits = '{"emit": 0}' WHERE id = $1`, [p.o.companyId]);
    const n0 = await count();
    const invalid = await emit();
    expect(invalid.isError).to.equal(true);
    expect(invalid.structuredContent).to.include({
      code: 'mcp.emit_rate_limit_invalid',
      next_action: 'fix_org_mcp_rate_limit',
    });
    expect(await count()).to.equal(n0);

    // cap 1 per minute: of three calls in a row (at most one minute boundary between them) at
    // least one is refused, and only the accepted ones issued a document
    await db.query(`UPDATE companies SET mcp_rate_limits = '{"emit": 1}' WHERE id = $1`, [p.o.companyId]);
    const answers = [await emit(), await emit(), await emit()];
    const limited = answers.filter((a) => a.isError);
    expect(limited.length).to.be.greaterThan(0);
    for (const a of limited) {
      expect(a.structuredContent).to.include({
        code: 'mcp.emit_rate_limited',
        next_action: 'wait_and_retry',
      });
      const detail = (a.structuredContent as { detail: { retry_after_seconds: number } }).detail;
      expect(detail.retry_after_seconds).to.be.within(1, 60);
    }
    expect(await count()).to.equal(n0 + answers.length - limited.length);
    await db.query(`UPDATE companies SET mcp_rate_limits = NULL WHERE id = $1`, [p.o.companyId]);
    await client.close();
  });

  it('rotates the refresh token; reusing the old one revokes the whole family', async () => {
    const asUrl = origin;
    const metadata = await discoverAuthorizationServerMetadata(asUrl);
    expect(metadata?.token_endpoint).to.equal(`${origin}/oauth/token`);
    const old = main.saved!;
    const rotated = await refreshAuthorization(asUrl, {
      metadata,
      clientInformation: main.info!,
      refreshToken: old.refresh_token!,
      resource: mcpUrl,
    });
    expect(rotated.refresh_token).to.be.a('string').and.not.equal(old.refresh_token);
    main.saveTokens(rotated);
    const client = await connectedClient(main);
    expect((await client.listTools()).tools.length).to.be.greaterThan(0);
    await client.close();

    let reuse: unknown;
    await refreshAuthorization(asUrl, {
      metadata,
      clientInformation: main.info!,
      refreshToken: old.refresh_token!,
      resource: mcpUrl,
    }).catch((e) => (reuse = e));
    expect(String(reuse)).to.match(/invalid_grant|InvalidGrant/i);
    // the family is gone: the rotated access token and refresh token no longer work
    const r = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${rotated.access_token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(r.status).to.equal(401);
    let again: unknown;
    await refreshAuthorization(asUrl, {
      metadata,
      clientInformation: main.info!,
      refreshToken: rotated.refresh_token!,
      resource: mcpUrl,
    }).catch((e) => (again = e));
    expect(String(again)).to.match(/invalid_grant|InvalidGrant/i);
  });

  it('refuses PKCE plain, an unregistered redirect URI, and a code with the wrong verifier', async () => {
    const a = agent();
    const reg = await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(a.clientMetadata),
    });
    expect(reg.status).to.equal(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = (params: Record<string, string>) =>
      `${origin}/oauth/authorize?${new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: cb.url,
        scope: 'dte:read',
        resource: mcpUrl,
        state: 'xyz',
        ...params,
      })}`;

    const plain = await fetch(authorize({ code_challenge: verifier, code_challenge_method: 'plain' }), {
      redirect: 'manual',
    });
    const plainAt = new URL(plain.headers.get('location') ?? 'http://none/', origin);
    expect(plainAt.searchParams.get('error')).to.equal('invalid_request');

    const foreign = await fetch(
      authorize({
        code_challenge: challenge,
        code_challenge_method: 'S256',
        redirect_uri: 'http://127.0.0.1:1/evil',
      }),
      { redirect: 'manual' },
    );
    expect(foreign.status).to.equal(400);
    expect(foreign.headers.get('location')).to.equal(null);
    expect(await foreign.text()).to.contain('redirect_uri');

    // a resource other than the MCP server: no token can name another audience
    const target = await fetch(
      authorize({
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: 'https://otro.example/mcp',
      }),
      { redirect: 'manual' },
    );
    expect(new URL(target.headers.get('location') ?? 'http://none/').searchParams.get('error')).to.equal(
      'invalid_target',
    );

    // without a dashboard session the page asks to sign in and nothing is granted
    const anonymous = await browser.newContext();
    const page = await anonymous.newPage();
    const hits = cb.hits.length;
    await page.goto(authorize({ code_challenge: challenge, code_challenge_method: 'S256' }));
    expect(await page.textContent('h1')).to.equal('Inicia sesión para continuar');
    expect(await page.$('#approve')).to.equal(null);
    expect(cb.hits.length).to.equal(hits);
    await anonymous.close();

    const code = await consent(
      new URL(authorize({ code_challenge: challenge, code_challenge_method: 'S256' })),
    );
    const token = (v: string) =>
      fetch(`${origin}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: cb.url,
          client_id: clientId,
          code_verifier: v,
          resource: mcpUrl,
        }),
      });
    const wrong = await token(randomBytes(32).toString('base64url'));
    expect(wrong.status).to.equal(400);
    expect(((await wrong.json()) as { error: string }).error).to.equal('invalid_grant');
  });

  it('a token without dte:write cannot issue: forbidden, nothing done', async () => {
    const a = new AgentOAuth(cb.url, 'dte:read');
    const t = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a });
    await new Client({ name: 'lector', version: '1.0.0' }).connect(t).catch(() => undefined);
    await t.finishAuth(await consent(a.authorizationUrl!, { grant: ['dte:read'] }));
    expect(a.saved?.scope).to.equal('dte:read');
    const client = await connectedClient(a);
    const n0 = (await p.t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes'))[0].n;
    const res = await client.callTool({
      name: 'emitir_dte',
      arguments: { idempotency_key: randomUUID(), documento: body(33, p.o.rut, 1000) },
    });
    expect(res.isError).to.equal(true);
    expect(res.structuredContent).to.include({ code: 'forbidden' });
    expect((await p.t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes'))[0].n).to.equal(n0);
    await client.close();
  });
  it('a user removed from the organization stops their agents at once; revoking the refresh token ends the grant', async () => {
    const db = p.t.db.dataSource;
    const a = new AgentOAuth(cb.url, 'dte:read');
    const t = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a });
    await new Client({ name: 'lector', version: '1.0.0' }).connect(t).catch(() => undefined);
    await t.finishAuth(await consent(a.authorizationUrl!, { grant: ['dte:read'] }));
    const tokens = a.saved!;
    const list = () =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${tokens.access_token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await list()).status).to.equal(200);

    await db.query('DELETE FROM memberships WHERE user_id = $1 AND organization_id = $2', [
      userId,
      p.o.orgId,
    ]);
    const removed = await list();
    expect(removed.status).to.equal(401);
    expect(removed.headers.get('www-authenticate')).to.contain('error="invalid_token"');
    await db.query(`INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, 'owner')`, [
      userId,
      p.o.orgId,
    ]);
    expect((await list()).status).to.equal(200);

    const revoke = await fetch(`${origin}/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: tokens.refresh_token!,
        token_type_hint: 'refresh_token',
        client_id: a.info!.client_id,
      }),
    });
    expect(revoke.status).to.equal(200);
    expect((await list()).status).to.equal(401);
  });
});
