/**
 * Issues 28 and 30, agents: over the real api (PostgreSQL, Redis, the SII simulator) with the
 * official MCP client and the OAuth flow driven in headless Chromium.
 * - dynamic client registration is bounded (a burst is refused, redirect hosts restricted by
 *   configuration), a registered client expires unless used, the consent page shows where the
 *   authorization goes, refuses a POST without its CSRF token and cannot be framed;
 * - an authorization code or a refresh token redeemed twice at once yields one token set;
 * - a second agent connected from the same browser leaves the first connected (its access token
 *   and its refresh token still work); a dashboard logout ends the ability to authorize;
 * - every note over an existing document (emitir_dte 61/56, derivar_dte anular/corregir) and every
 *   override_* waits for approval, with a summary naming type, folio, customer, amount and what
 *   goes to the SII; another organization's document is not found (nothing parked);
 * - consultar_accion_pendiente answers only the caller's own actions;
 * - owners list and revoke connections and read the MCP audit log (API and dashboard page).
 */
import { expect } from 'chai';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { body, emit, expectSchema, orgWithCafs, type DteOrg } from '../../services/api/test/dtes-fixtures';
import {
  call,
  dashboardMember,
  DASHBOARD_ORIGIN,
  startTestApi,
  type TestApi,
} from '../../services/api/test/support/test-api';
import { freePort } from '../support/pipeline-harness';
import { AgentOAuth, CHROMIUM_ARGS, callbackServer, type CallbackServer } from './oauth-agent';

const PER_ADDRESS = 6;
const SCOPE = 'dte:read dte:write';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

describe('agents: bounded registration, atomic redemption, several agents, approvals (issues 28, 30)', function () {
  this.timeout(180_000);
  let t: TestApi;
  let o: DteOrg;
  let other: DteOrg;
  let origin: string;
  let mcpUrl: string;
  let browser: Browser;
  let cb: CallbackServer;
  let ownerCookie: string;
  let ownerUserId: string;
  let memberCookie: string;
  let invoice: { id: string; folio: number };
  let foreignInvoiceId: string;
  const db = () => t.db.dataSource;
  /** this test's Redis keys matching `pattern` (KEYS does not apply the client's prefix) */
  const keys = async (pattern: string) => {
    const prefix = t.redis.options.keyPrefix ?? '';
    return (await t.redis.keys(`${prefix}${pattern}`)).map((k) => k.slice(prefix.length));
  };
  const count = async (table: string) =>
    (await db().query(`SELECT count(*)::int AS n FROM ${table}`))[0].n as number;

  async function userIn(orgId: string, role: 'owner' | 'member'): Promise<{ id: string; cookie: string }> {
    const m = await dashboardMember(t, orgId, role, { email: `agente-${randomUUID()}@example.cl` });
    return { id: m.userId, cookie: m.cookie };
  }

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    mcpUrl = `${origin}/mcp`;
    t = await startTestApi({
      port,
      env: {
        PUBLIC_BASE_URL: `${origin}/api/v1`,
        DASHBOARD_ORIGINS: `${DASHBOARD_ORIGIN},${origin}`,
        OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: String(PER_ADDRESS),
        OAUTH_REDIRECT_HOSTS: '127.0.0.1,localhost',
      },
    });
    o = await orgWithCafs(t, { tipos: [33, 56, 61] });
    other = await orgWithCafs(t, { tipos: [33] });
    const inv = await emit(t, o, body(33, o.rut, 25000));
    expect(inv.status, inv.text).to.be.oneOf([201, 202]);
    invoice = { id: String(inv.body.id), folio: Number(inv.body.folio) };
    const foreign = await emit(t, other, body(33, other.rut, 9000));
    foreignInvoiceId = String(foreign.body.id);
    const owner = await userIn(o.orgId, 'owner');
    [ownerCookie, ownerUserId] = [owner.cookie, owner.id];
    memberCookie = (await userIn(o.orgId, 'member')).cookie;
    cb = await callbackServer();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  // each test starts a new registration window (the burst test measures its own)
  afterEach(async () => {
    const counters = await keys('oauth:dcr:*');
    if (counters.length) await t.redis.del(...counters);
  });
  after(async () => {
    await browser?.close();
    cb?.close();
    await t?.close();
  });

  const register = (redirect = cb.url) =>
    fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Agente de prueba',
        redirect_uris: [redirect],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: SCOPE,
      }),
    });

  /** A fresh PKCE pair and the authorization URL of a client. */
  function authorization(clientId: string) {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${origin}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: cb.url,
      scope: SCOPE,
      state: randomUUID(),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: mcpUrl,
    }).toString();
    return { verifier, url };
  }

  async function signedInContext(cookie: string): Promise<BrowserContext> {
    const context = await browser.newContext();
    await context.addCookies([{ name: 'dte_session', value: cookie, url: origin }]);
    return context;
  }

  /** The user approves the consent page in `context` (kept: the provider's cookies stay); the code. */
  async function consentIn(context: BrowserContext, url: URL): Promise<string> {
    const page = await context.newPage();
    try {
      const before = cb.hits.length;
      await page.goto(url.href);
      await page.waitForSelector('#approve');
      await page.selectOption('#environment', 'cert');
      await Promise.all([page.waitForURL(`${cb.url}**`, { timeout: 15_000 }), page.click('#approve')]);
      expect(cb.hits.length).to.equal(before + 1);
      return cb.hits[cb.hits.length - 1].get('code')!;
    } finally {
      await page.close();
    }
  }

  const tokenRequest = (form: Record<string, string>) =>
    fetch(`${origin}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });

  const redeem = (clientId: string, code: string, verifier: string) =>
    tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: cb.url,
      client_id: clientId,
      resource: mcpUrl,
    });

  const refresh = (clientId: string, refreshToken: string) =>
    tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
      resource: mcpUrl,
    });

  /** Registers a client and connects it as the user of `context`: client id and tokens. */
  async function connectAgent(context: BrowserContext): Promise<{ clientId: string; tokens: Tokens }> {
    const reg = await register();
    expect(reg.status).to.equal(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { verifier, url } = authorization(clientId);
    const res = await redeem(clientId, await consentIn(context, url), verifier);
    expect(res.status).to.equal(200);
    return { clientId, tokens: (await res.json()) as Tokens };
  }

  const listTools = (token: string) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  /** The official MCP client with the agent's tokens. */
  async function mcpClient(clientId: string, tokens: Tokens): Promise<Client> {
    const a = new AgentOAuth(cb.url, SCOPE);
    a.info = { client_id: clientId, redirect_uris: [cb.url] };
    a.saved = { ...tokens, token_type: 'Bearer' };
    const client = new Client({ name: 'agente-prueba', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a }));
    return client;
  }

  let ownerContext: BrowserContext;
  let first: { clientId: string; tokens: Tokens };
  let second: { clientId: string; tokens: Tokens };
  /** the agent of the approval tests, connected from its own browser context */
  let asking: { clientId: string; tokens: Tokens };

  it('a burst of client registrations from one address is refused past the bound; redirect hosts are restricted; an unused client expires', async () => {
    const answers: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < PER_ADDRESS + 4; i++) {
      const res = await register();
      answers.push(res.status);
      if (res.status === 201) ids.push(((await res.json()) as { client_id: string }).client_id);
      else {
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
        expect(((await res.json()) as { error: string }).error).to.equal('too_many_requests');
      }
    }
    expect(answers.filter((s) => s === 201)).to.have.length(PER_ADDRESS);
    expect(answers.slice(PER_ADDRESS)).to.deep.equal([429, 429, 429, 429]);
    // an unused client is stored with an expiry (the service's default: a day)
    const ttl = await t.redis.ttl(`oidc:Client:${ids[0]}`);
    expect(ttl).to.be.greaterThan(0).and.at.most(86_400);
    await t.redis.del(...(await keys('oauth:dcr:*'))); // a new hour for this address
    const evil = await register('https://agente.example.com/callback');
    expect(evil.status).to.equal(400);
    expect(((await evil.json()) as { error: string }).error).to.equal('invalid_redirect_uri');
  });

  it('/mcp answers 401 to a caller without a valid token before reading its body', async () => {
    for (const authorization of [undefined, 'Bearer not-a-token']) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(mcpUrl, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': String(1_048_576),
            ...(authorization ? { Authorization: authorization } : {}),
          },
        });
        // 1 MiB announced, 16 bytes sent, never finished: the answer must not wait for the rest
        const timer = setTimeout(() => reject(new Error('no answer while the body is pending')), 5_000);
        req.on('response', (res) => {
          clearTimeout(timer);
          res.resume();
          req.destroy();
          resolve(res.statusCode!);
        });
        req.on('error', (e) => (timer ? undefined : reject(e)));
        req.write('{"jsonrpc":"2.0"');
      });
      expect(status, authorization ?? 'no token').to.equal(401);
    }
  });

  it('the consent page shows the redirect host, cannot be framed, and refuses a confirmation without its CSRF token', async () => {
    const reg = await register();
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { url } = authorization(clientId);
    const context = await signedInContext(ownerCookie);
    const page = await context.newPage();
    try {
      await page.goto(url.href);
      await page.waitForSelector('#approve');
      expect(await page.textContent('#redirect-host')).to.contain(new URL(cb.url).host);
      // the browser's own cookies (the interaction's and the dashboard session)
      const consentAgain = await context.request.get(page.url());
      expect(consentAgain.headers()['content-security-policy']).to.contain("frame-ancestors 'none'");
      expect(consentAgain.headers()['x-frame-options']).to.equal('DENY');
      const connections = await count('mcp_connections');
      // a forged form (no token, or another's) from the same browser: refused, nothing granted
      const action = new URL((await page.getAttribute('#consent', 'action'))!, origin).href;
      const form = {
        company_id: await page.inputValue('#company'),
        environment: 'cert',
        scope: 'dte:read',
      };
      const forged = [
        (await context.request.post(action, { form, maxRedirects: 0 })).status(),
        (
          await context.request.post(action, { form: { ...form, csrf: 'x'.repeat(43) }, maxRedirects: 0 })
        ).status(),
      ];
      expect(forged).to.deep.equal([403, 403]);
      expect(await count('mcp_connections')).to.equal(connections);
      // the page's own form still works
      await page.selectOption('#environment', 'cert');
      await Promise.all([page.waitForURL(`${cb.url}**`, { timeout: 15_000 }), page.click('#approve')]);
      expect(await count('mcp_connections')).to.equal(connections + 1);
      // once used, the client lives as long as its refresh tokens (14 days)
      expect(await t.redis.ttl(`oidc:Client:${clientId}`)).to.be.greaterThan(86_400);
    } finally {
      await context.close();
    }
    const authorize = await fetch(url.href, { redirect: 'manual' });
    expect(authorize.headers.get('content-security-policy')).to.contain("frame-ancestors 'none'");
  });

  it('an authorization code or a refresh token redeemed twice at once yields one token set', async () => {
    const reg = await register();
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { verifier, url } = authorization(clientId);
    const context = await signedInContext(ownerCookie);
    const code = await consentIn(context, url);
    await context.close();
    // four redemptions at once: at most one token set exists afterwards (a loser that sees the
    // code already consumed revokes its grant, as RFC 6749 4.1.2 asks: then none does)
    const working = async (answers: Response[]) => {
      const sets = await Promise.all(
        answers.filter((r) => r.status === 200).map((r) => r.json() as Promise<Tokens>),
      );
      const live = [];
      for (const s of sets) if ((await listTools(s.access_token)).status === 200) live.push(s);
      return { issued: sets, live };
    };
    const codeAnswers = await Promise.all(Array.from({ length: 4 }, () => redeem(clientId, code, verifier)));
    for (const r of codeAnswers.filter((a) => a.status !== 200))
      expect(((await r.clone().json()) as { error: string }).error).to.equal('invalid_grant');
    const codes = await working(codeAnswers);
    expect(codes.issued.length, 'token sets issued for one code').to.be.at.most(1);
    expect(codes.live.length).to.be.at.most(1);
    if (!codes.live[0]) return;
    const refreshAnswers = await Promise.all(
      Array.from({ length: 4 }, () => refresh(clientId, codes.live[0].refresh_token)),
    );
    for (const r of refreshAnswers.filter((a) => a.status !== 200))
      expect(((await r.clone().json()) as { error: string }).error).to.equal('invalid_grant');
    const refreshed = await working(refreshAnswers);
    expect(refreshed.issued.length, 'token sets issued for one refresh token').to.be.at.most(1);
    expect(refreshed.live.length).to.be.at.most(1);
  });

  it('a second agent connected from the same browser leaves the first connected: its access and refresh tokens still work', async () => {
    ownerContext = await signedInContext(ownerCookie);
    first = await connectAgent(ownerContext);
    expect((await listTools(first.tokens.access_token)).status).to.equal(200);
    second = await connectAgent(ownerContext);
    expect((await listTools(second.tokens.access_token)).status).to.equal(200);
    expect(
      (await listTools(first.tokens.access_token)).status,
      'first agent after the second consent',
    ).to.equal(200);
    const renewed = await refresh(first.clientId, first.tokens.refresh_token);
    expect(renewed.status, await renewed.clone().text()).to.equal(200);
    first.tokens = (await renewed.json()) as Tokens;
    expect((await listTools(first.tokens.access_token)).status).to.equal(200);
    // the refresh token lasts as the consent says (14 days), not the browser session's hour
    const rt = await keys('oidc:RefreshToken:*');
    const ttls = await Promise.all(rt.map((k) => t.redis.ttl(k)));
    expect(Math.max(...ttls)).to.be.greaterThan(13 * 24 * 3600);
  });

  it('emitir_dte of a credit or debit note over an existing document, derivar_dte anular/corregir and any override wait for approval, with a summary a person can check', async () => {
    const context = await signedInContext(ownerCookie);
    asking = await connectAgent(context);
    await context.close();
    const client = await mcpClient(asking.clientId, asking.tokens);
    const dtes = await count('dtes');
    const ref = {
      line_num: 1,
      tipo_doc_ref: 33,
      folio_ref: invoice.folio,
      fecha_ref: body(33, o.rut).fecha_emision,
    };
    const calls = [
      {
        name: 'emitir_dte',
        arguments: {
          idempotency_key: randomUUID(),
          documento: {
            ...body(61, o.rut, 25000),
            nc_reason: 'anulacion',
            references: [{ ...ref, cod_ref: 1, razon_ref: 'Anula factura' }],
          },
        },
      },
      {
        name: 'emitir_dte',
        arguments: {
          idempotency_key: randomUUID(),
          documento: {
            ...body(56, o.rut, 3000),
            references: [{ ...ref, cod_ref: 3, razon_ref: 'Intereses' }],
          },
        },
      },
      {
        name: 'emitir_dte',
        arguments: {
          idempotency_key: randomUUID(),
          documento: { ...body(33, o.rut, 5000), override_cedida: true },
        },
      },
      {
        name: 'derivar_dte',
        arguments: { id: invoice.id, idempotency_key: randomUUID(), derivacion: { action: 'anular' } },
      },
      {
        name: 'derivar_dte',
        arguments: {
          id: invoice.id,
          idempotency_key: randomUUID(),
          derivacion: {
            action: 'corregir-nc',
            items: [
              { nombre: 'Descuento', cantidad: 1, precio_unitario: 1000, monto_item: 1000, exento: false },
            ],
          },
        },
      },
    ];
    const summaries: string[] = [];
    for (const c of calls) {
      const res = await client.callTool(c);
      expect(res.isError, JSON.stringify(res.structuredContent)).to.equal(false);
      const pending = (res.structuredContent as { pending_action: { status: string; summary: string } })
        .pending_action;
      expect(pending.status, c.name).to.equal('pending');
      summaries.push(pending.summary);
    }
    expect(await count('dtes'), 'nothing issued before approval').to.equal(dtes);
    const [nc, nd, override, anular, corregir] = summaries;
    for (const s of summaries) {
      expect(s).to.match(/Cliente: .+ \(RUT \d{1,2}\.\d{3}\.\d{3}-[\dK]\)/);
      expect(s).to.match(/Monto: \$[\d.]+/);
      expect(s).to.contain('Se enviará al SII');
      expect(s).to.not.match(/[0-9a-f]{8}-[0-9a-f]{4}-/); // no document uuid
    }
    expect(nc)
      .to.match(/^Emitir nota de crédito electrónica/)
      .and.contain(`Factura electrónica N° ${invoice.folio}`);
    expect(nc).to.contain('anula el documento');
    expect(nd)
      .to.match(/^Emitir nota de débito electrónica/)
      .and.contain('corrige montos');
    expect(override).to.contain('override_cedida');
    expect(anular).to.match(
      new RegExp(`^Anular Factura electrónica N° ${invoice.folio} con una nota de crédito`),
    );
    expect(anular).to.contain('Monto: $29.750'); // the invoice's total: 25 000 + IVA
    expect(corregir).to.contain(`Factura electrónica N° ${invoice.folio}`).and.contain('Monto: $1.190');

    // a plain invoice still runs at once
    const plain = await client.callTool({
      name: 'emitir_dte',
      arguments: {
        idempotency_key: randomUUID(),
        certificate_id: o.certId,
        documento: body(33, o.rut, 1000),
      },
    });
    expect(plain.isError, JSON.stringify(plain.structuredContent)).to.equal(false);
    expect(plain.structuredContent).to.not.have.property('pending_action');
    expect(await count('dtes')).to.equal(dtes + 1);
    await client.close();
  });

  it("derivar_dte anular of another organization's document answers not found and parks nothing", async () => {
    const client = await mcpClient(asking.clientId, asking.tokens);
    const parked = await count('pending_actions');
    const res = await client.callTool({
      name: 'derivar_dte',
      arguments: { id: foreignInvoiceId, idempotency_key: randomUUID(), derivacion: { action: 'anular' } },
    });
    expect(res.isError).to.equal(true);
    expect((res.structuredContent as { code: string }).code).to.equal('document.not_found');
    expect(await count('pending_actions')).to.equal(parked);
    await client.close();
  });

  it("consultar_accion_pendiente answers only the caller's own actions, never a colleague's", async () => {
    const mine: { id: string }[] = await db().query(
      `SELECT p.id FROM pending_actions p WHERE p.connection_id = $1 LIMIT 1`,
      [(await db().query(`SELECT id FROM mcp_connections WHERE client_id = $1`, [asking.clientId]))[0].id],
    );
    const memberContext = await signedInContext(memberCookie);
    const colleague = await connectAgent(memberContext);
    await memberContext.close();
    const theirs = await mcpClient(colleague.clientId, colleague.tokens);
    const res = await theirs.callTool({ name: 'consultar_accion_pendiente', arguments: { id: mine[0].id } });
    expect(res.isError).to.equal(true);
    expect((res.structuredContent as { code: string }).code).to.equal('pending_action_not_found');
    await theirs.close();
    const own = await mcpClient(asking.clientId, asking.tokens);
    const ok = await own.callTool({ name: 'consultar_accion_pendiente', arguments: { id: mine[0].id } });
    expect(ok.isError).to.equal(false);
    await own.close();
  });

  it('owners list the agents, read the MCP audit log and disconnect one agent (API and dashboard); the other stays connected', async () => {
    const session = { cookie: ownerCookie, headers: { Origin: origin } };
    const list = await call<{ data: { id: string; client_id: string; revoked_at: string | null }[] }>(
      t.url,
      'GET',
      '/mcp-connections',
      session,
    );
    expect(list.status).to.equal(200);
    expectSchema('mcp-connection-list.schema.json', list.body);
    const ids = list.body.data.map((c) => c.client_id);
    expect(ids).to.include.members([first.clientId, second.clientId]);
    // a member sees only their own agents and cannot read the audit log
    const asMember = await call<{ data: { user_email: string }[] }>(t.url, 'GET', '/mcp-connections', {
      cookie: memberCookie,
    });
    expect(asMember.body.data).to.have.length(1);
    expect((await call(t.url, 'GET', '/mcp-audit-log', { cookie: memberCookie })).status).to.equal(403);
    // API keys do not manage agents
    expect((await call(t.url, 'GET', '/mcp-connections', { key: o.key })).status).to.be.oneOf([401, 403]);

    const audit = await call<{
      data: { id: string; tool: string; outcome: string }[];
      next_cursor: string | null;
    }>(t.url, 'GET', '/mcp-audit-log?limit=3', session);
    expect(audit.status).to.equal(200);
    expectSchema('mcp-audit-log.schema.json', audit.body);
    expect(audit.body.data).to.have.length(3);
    const ids3 = audit.body.data.map((a) => Number(a.id));
    expect(ids3).to.deep.equal([...ids3].sort((a, b) => b - a));
    const older = await call<{ data: { id: string; tool: string; outcome: string }[] }>(
      t.url,
      'GET',
      `/mcp-audit-log?limit=100&cursor=${audit.body.next_cursor}`,
      session,
    );
    expect(Number(older.body.data[0].id)).to.be.lessThan(Math.min(...ids3));
    const all = [...audit.body.data, ...older.body.data];
    expect(all.map((a) => `${a.tool}:${a.outcome}`)).to.include('derivar_dte:pending');
    // another organization's connection is not found
    const stranger = await call(t.url, 'DELETE', `/mcp-connections/${randomUUID()}`, session);
    expect(stranger.status).to.equal(404);

    // the dashboard page: both agents, disconnect the second one
    const page = await ownerContext.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${origin}/dashboard/agentes`);
    await page.locator('body[data-agentes-ready="true"]').waitFor();
    const secondId = list.body.data.find((c) => c.client_id === second.clientId)!.id;
    expect(await page.locator(`tr[data-conexion="${secondId}"]`).textContent()).to.contain(
      'Agente de prueba',
    );
    expect(await page.locator('#tabla-mcp-auditoria tbody tr').count()).to.be.greaterThan(3);
    await page.click(`button[data-revocar="${secondId}"]`);
    await page.locator(`tr[data-conexion="${secondId}"][data-estado="revocada"]`).waitFor();
    expect(errors).to.deep.equal([]);
    await page.close();

    expect((await listTools(second.tokens.access_token)).status).to.equal(401);
    const refused = await refresh(second.clientId, second.tokens.refresh_token);
    expect(refused.status).to.equal(400);
    expect(((await refused.json()) as { error: string }).error).to.equal('invalid_grant');
    expect((await listTools(first.tokens.access_token)).status).to.equal(200);
  });

  it("a dashboard logout ends the authorization server's session: the same client must be approved again by a signed-in user", async () => {
    const cookie = await t.sessionCookie(ownerUserId, o.orgId);
    const context = await signedInContext(cookie);
    const agent = await connectAgent(context);
    const out = await call(t.url, 'POST', '/auth/logout', { cookie, headers: { Origin: origin } });
    expect(out.status).to.be.oneOf([200, 204]);
    const page = await context.newPage();
    const before = cb.hits.length;
    await page.goto(authorization(agent.clientId).url.href);
    await page.waitForSelector('h1');
    expect(cb.hits.length, 'no code without a dashboard session').to.equal(before);
    expect(await page.textContent('h1')).to.contain('Inicia sesión');
    await page.close();
    await context.close();
    await ownerContext.close();
  });
});

describe('agents: dynamic client registration closed by configuration (issue 28)', function () {
  this.timeout(60_000);
  let t: TestApi;
  before(async () => {
    t = await startTestApi({ env: { OAUTH_REGISTRATION: 'closed' } });
  });
  after(async () => {
    await t?.close();
  });

  it('OAUTH_REGISTRATION=closed: no registration endpoint in the metadata, and registering stores nothing', async () => {
    const origin = new URL(t.url).origin;
    const metadata = (await (
      await fetch(`${origin}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.token_endpoint).to.equal(`${origin}/oauth/token`);
    expect(metadata).to.not.have.property('registration_endpoint');
    const res = await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['http://127.0.0.1:9/callback'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(res.status).to.be.oneOf([400, 404]);
    const prefix = t.redis.options.keyPrefix ?? '';
    expect(await t.redis.keys(`${prefix}oidc:Client:*`)).to.deep.equal([]);
  });
});
