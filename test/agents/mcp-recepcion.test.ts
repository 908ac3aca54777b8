/**
 * The purchases side over MCP (issue 15), on the real stack: the api with real PostgreSQL and
 * Redis, the SII simulator's register, the MCP SDK's own client behind OAuth (consent in headless
 * Chromium), and the dashboard's Aprobaciones page in Chromium.
 *
 * A claim (reclamo) asked by the agent waits as a pending action: nothing reaches the SII register
 * until the user approves it in the dashboard; then it reaches the simulator's register once and
 * shows in the inbox. A rejected acuse never reaches it. Recepcion tools are refused without their
 * scope. And the consent step's "no session" path: the dashboard login sends the user back to the
 * consent page (same-origin `return_to` only; another site is never a destination).
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { santiagoDate } from '@dte/engine';
import { syncPeriod, type RcvSource } from '@dte/reception';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  startReceptionWorld,
  SUPPLIER_RUT as SUPPLIER,
  type ReceptionWorld,
} from '../../services/api/test/support/reception-world';
import {
  call,
  dashboardMember,
  DASHBOARD_ORIGIN,
  type TestApi,
} from '../../services/api/test/support/test-api';
import { freePort } from '../support/pipeline-harness';
import { AgentOAuth, CHROMIUM_ARGS, callbackServer, consentInBrowser } from './oauth-agent';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Pending {
  id: string;
  status: string;
  tool: string;
  summary: string;
  result: Doc | null;
}

const PASSWORD = 'clave-segura-123';

describe('MCP purchases tools: RCV, inbox, acuse/reclamo approved in the dashboard (issue 15)', function () {
  this.timeout(240_000);
  let w: ReceptionWorld;
  let t: TestApi;
  let origin: string;
  let mcpUrl: string;
  let key: string;
  let orgId: string;
  let companyId: string;
  let source: RcvSource;
  let browser: Browser;
  let cb: Awaited<ReturnType<typeof callbackServer>>;
  let email: string;
  let cookie: string;
  const periodo = santiagoDate(new Date()).slice(0, 7);

  /** the simulator's register: the events recorded on a seeded purchase */
  const registerEvents = (folio: number) =>
    (
      t.sim.state.env.cert.purchases.find((p) => p.folio === folio && p.rutEmisor === SUPPLIER)?.events ?? []
    ).map((e) => e.codEvento);
  const inboxDoc = async (folio: number) =>
    (
      await call<{ documentos: Doc[] }>(t.url, 'GET', '/recepcion?pageSize=500', { key })
    ).body.documentos.find((d) => d.folio === folio && d.rut_emisor === SUPPLIER)!;
  const pendingCount = async () =>
    Number((await t.db.dataSource.query('SELECT count(*)::int AS n FROM pending_actions'))[0].n);

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    mcpUrl = `${origin}/mcp`;
    w = await startReceptionWorld({ port, env: { PUBLIC_BASE_URL: `${origin}/api/v1` } });
    ({ t, key, orgId, companyId, rcv: source } = w);
    for (const folio of [901, 902])
      await w.purchase({ folio, razonSocialEmisor: 'PROVEEDORA DEL SUR SPA', mntNeto: 10_000 });
    // the RCV sync (the code services/rcv-sync runs) brings the purchases into the inbox
    expect(
      await syncPeriod(t.db.dataSource, source, { companyId, env: 'cert', periodo, backoffMs: 1000 }),
    ).to.include({ outcome: 'synced' });

    // a dashboard user with a password, owner of the organization
    ({ email, cookie } = await dashboardMember(t, orgId, 'owner', {
      email: `aprobador-${randomUUID()}@empresa.cl`,
      password: PASSWORD,
      nombre: 'Ana',
    }));
    cb = await callbackServer();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    cb?.close();
    await w?.close();
  });

  /** An agent authorized by the signed-in user for `grant`; returns its SDK client. */
  async function agentWith(grant: string[]): Promise<Client> {
    const a = new AgentOAuth(cb.url, grant.join(' '));
    const tr = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a });
    await new Client({ name: 'agente', version: '1.0.0' }).connect(tr).catch(() => undefined);
    await tr.finishAuth(
      await consentInBrowser(browser, { origin, cookie, cb }, a.authorizationUrl!, { grant }),
    );
    expect(a.saved?.scope?.split(' ').sort()).to.deep.equal([...grant].sort());
    const client = new Client({ name: 'agente', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a }));
    return client;
  }

  /** The dashboard's Aprobaciones page in Chromium, signed in with the user's session. */
  async function approvalsPage(): Promise<{ page: Page; close: () => Promise<void> }> {
    const context = await browser.newContext();
    await context.addCookies([{ name: 'dte_session', value: cookie, url: origin }]);
    const page = await context.newPage();
    await page.goto(`${origin}/dashboard/aprobaciones`);
    await page.waitForSelector('body[data-ready="true"]');
    return { page, close: () => context.close() };
  }

  let agent: Client;

  it('lists the purchases tools; the RCV and the inbox answer as the REST routes; the event tool takes the REST body schema', async () => {
    agent = await agentWith(['rcv:read', 'recepcion:read', 'recepcion:write']);
    const { tools } = await agent.listTools();
    const names = tools.map((x) => x.name);
    expect(names).to.include.members([
      'consultar_rcv',
      'sincronizar_rcv',
      'listar_recepcion',
      'obtener_recepcion',
      'registrar_evento_recepcion',
      'consultar_accion_pendiente',
    ]);
    const ev = tools.find((x) => x.name === 'registrar_evento_recepcion')!;
    expect((ev.inputSchema.properties as Record<string, { title?: string }>).evento.title).to.equal(
      'RecepcionEvento',
    );
    expect(ev.annotations?.readOnlyHint).to.equal(false);

    const inbox = await agent.callTool({ name: 'listar_recepcion', arguments: { pageSize: 500 } });
    expect(inbox.isError, JSON.stringify(inbox.structuredContent)).to.equal(false);
    const rest = await call(t.url, 'GET', '/recepcion?pageSize=500', { key });
    expect(inbox.structuredContent).to.deep.equal(rest.body);
    expect((inbox.structuredContent as { total: number }).total).to.equal(2);
    const bad = await agent.callTool({ name: 'listar_recepcion', arguments: { pageSize: 501 } });
    expect(bad.structuredContent).to.include({ code: 'recepcion.query_invalid' });

    const rcv = await agent.callTool({ name: 'consultar_rcv', arguments: { periodo } });
    expect(rcv.isError, JSON.stringify(rcv.structuredContent)).to.equal(false);
    expect(rcv.structuredContent).to.deep.equal(
      (await call(t.url, 'GET', `/rcv?periodo=${periodo}`, { key })).body,
    );
    const future = await agent.callTool({ name: 'consultar_rcv', arguments: { periodo: '2999-01' } });
    expect(future.structuredContent).to.include({ code: 'rcv.period.invalid' });
    // a sync request goes through the outbox exactly as POST /rcv
    const sync = await agent.callTool({ name: 'sincronizar_rcv', arguments: { periodo } });
    expect(sync.isError, JSON.stringify(sync.structuredContent)).to.equal(false);
    const queued = sync.structuredContent as { periodo: string; estado: string; solicitud_id: string };
    expect(queued).to.include({ periodo, estado: 'queued' });
    const [row] = await t.db.dataSource.query(`SELECT topic, message_key FROM outbox WHERE event_id = $1`, [
      queued.solicitud_id,
    ]);
    expect(row).to.include({ topic: 'rcv.sync', message_key: `${companyId}:cert:${periodo}` });
  });

  it('a claim waits as a pending action; nothing reaches the SII register until the user approves it in the dashboard; then once', async () => {
    const doc = await inboxDoc(901);
    expect(doc.reclamo).to.equal(null);

    // bad input is refused at once and parks nothing
    const n0 = await pendingCount();
    const noConfirm = await agent.callTool({
      name: 'registrar_evento_recepcion',
      arguments: { id: doc.id, evento: { accion: 'RCD' } },
    });
    expect(noConfirm.structuredContent).to.include({ code: 'recepcion.evento_invalid_input' });
    const missing = await agent.callTool({
      name: 'registrar_evento_recepcion',
      arguments: { id: randomUUID(), evento: { accion: 'RCD', confirmar: true } },
    });
    expect(missing.structuredContent).to.include({ code: 'recepcion.no_encontrado' });
    expect(await pendingCount()).to.equal(n0);

    const res = await agent.callTool({
      name: 'registrar_evento_recepcion',
      arguments: { id: doc.id, evento: { accion: 'RCD', confirmar: true } },
    });
    expect(res.isError, JSON.stringify(res.structuredContent)).to.equal(false);
    const pending = (res.structuredContent as { pending_action: Pending }).pending_action;
    expect(pending).to.include({ status: 'pending', tool: 'registrar_evento_recepcion' });
    expect(pending.summary).to.contain('Reclamar el contenido del documento (RCD)').and.contain('folio 901');
    expect(registerEvents(901), 'nothing at the SII before approval').to.deep.equal([]);
    expect((await inboxDoc(901)).reclamo).to.equal(null);

    const ui = await approvalsPage();
    try {
      const row = ui.page.locator(`tr[data-accion="${pending.id}"]`);
      await row.waitFor();
      expect(await row.getAttribute('data-estado')).to.equal('pending');
      const text = await row.textContent();
      expect(text).to.contain('Reclamar el contenido del documento (RCD) ante el SII');
      expect(text).to.contain(`folio 901 de ${SUPPLIER}`);
      expect(text).to.contain('Pendiente');
      // the tool in words, not its MCP name
      expect(text).to.contain('Acuse o reclamo de una factura recibida');
      expect(text).to.not.contain('registrar_evento_recepcion');
      await row.getByRole('button', { name: /^Aprobar/ }).click();
      const done = ui.page.locator(`tr[data-accion="${pending.id}"][data-estado="approved"]`);
      await done.waitFor({ timeout: 20_000 });
      expect(await done.textContent())
        .to.contain('Aprobada y ejecutada')
        .and.contain('Registrada en el SII (RCD)');
      expect(await done.locator('button').count(), 'no buttons once decided').to.equal(0);
      expect(await ui.page.textContent('#aviso')).to.contain('Aprobada y ejecutada');
    } finally {
      await ui.close();
    }

    // it reached the simulator's register exactly once and shows in the inbox
    expect(registerEvents(901)).to.deep.equal(['RCD']);
    expect(await inboxDoc(901)).to.include({ reclamo: 'RCD', sii_estado: 'claimed' });
    const state = await agent.callTool({ name: 'consultar_accion_pendiente', arguments: { id: pending.id } });
    const after = (state.structuredContent as { pending_action: Pending }).pending_action;
    expect(after.status).to.equal('approved');
    expect(after.result).to.include({ id: doc.id, reclamo: 'RCD', sii_estado: 'claimed' });
    // a second approval (another tab, a double click) runs nothing again
    const again = await fetch(`${t.url}/pending-actions/${pending.id}/approve`, {
      method: 'POST',
      headers: { Cookie: `dte_session=${cookie}`, Origin: DASHBOARD_ORIGIN },
    });
    expect(again.status).to.equal(200);
    expect(registerEvents(901)).to.deep.equal(['RCD']);
    // the RCV read from the SII shows it too
    await syncPeriod(t.db.dataSource, source, { companyId, env: 'cert', periodo, backoffMs: 1000 });
    const rcv = await call<Doc>(t.url, 'GET', `/rcv?periodo=${periodo}`, { key });
    expect(rcv.body.compras.find((d: Doc) => d.folio === 901)).to.deep.include({
      sii_estado: 'claimed',
      eventos: ['RCD'],
    });
  });

  it('a rejected acuse never reaches the SII register', async () => {
    const doc = await inboxDoc(902);
    const res = await agent.callTool({
      name: 'registrar_evento_recepcion',
      arguments: { id: doc.id, evento: { accion: 'ACD', confirmar: true } },
    });
    const pending = (res.structuredContent as { pending_action: Pending }).pending_action;
    expect(pending.status).to.equal('pending');

    const ui = await approvalsPage();
    try {
      const row = ui.page.locator(`tr[data-accion="${pending.id}"]`);
      await row.waitFor();
      expect(await row.textContent()).to.contain('Aceptar el contenido del documento (ACD)');
      await row.getByRole('button', { name: /^Rechazar/ }).click();
      const done = ui.page.locator(`tr[data-accion="${pending.id}"][data-estado="rejected"]`);
      await done.waitFor({ timeout: 20_000 });
      expect(await done.textContent())
        .to.contain('Rechazada')
        .and.contain('No se hizo nada');
    } finally {
      await ui.close();
    }
    expect(registerEvents(902)).to.deep.equal([]);
    expect(await inboxDoc(902)).to.include({ acuse: null, reclamo: null });
    // approving it afterwards changes nothing
    const late = await fetch(`${t.url}/pending-actions/${pending.id}/approve`, {
      method: 'POST',
      headers: { Cookie: `dte_session=${cookie}`, Origin: DASHBOARD_ORIGIN },
    });
    expect(((await late.json()) as { pending_action: Pending }).pending_action.status).to.equal('rejected');
    expect(registerEvents(902)).to.deep.equal([]);
    const state = await agent.callTool({ name: 'consultar_accion_pendiente', arguments: { id: pending.id } });
    expect((state.structuredContent as { pending_action: Pending }).pending_action.status).to.equal(
      'rejected',
    );
    // every call is in the MCP audit log: the parked ones, and the approved one when it ran
    const audit: { outcome: string; error_code: string | null }[] = await t.db.dataSource.query(
      `SELECT outcome, error_code FROM mcp_audit_log WHERE tool = 'registrar_evento_recepcion' ORDER BY id`,
    );
    expect(audit.map((a) => `${a.outcome}:${a.error_code ?? ''}`)).to.deep.equal([
      'error:recepcion.evento_invalid_input',
      'error:recepcion.no_encontrado',
      'pending:',
      'ok:',
      'pending:',
    ]);
    await agent.close();
  });

  it('recepcion and RCV tools are refused without their scope; nothing parked, nothing sent', async () => {
    const reader = await agentWith(['recepcion:read']);
    const doc = await inboxDoc(902);
    const n0 = await pendingCount();
    const write = await reader.callTool({
      name: 'registrar_evento_recepcion',
      arguments: { id: doc.id, evento: { accion: 'RCD', confirmar: true } },
    });
    expect(write.isError).to.equal(true);
    expect(write.structuredContent).to.deep.include({
      code: 'forbidden',
      detail: { requiredScope: 'recepcion:write' },
    });
    const rcv = await reader.callTool({ name: 'consultar_rcv', arguments: { periodo } });
    expect(rcv.structuredContent).to.include({ code: 'forbidden' });
    expect((await reader.callTool({ name: 'listar_recepcion', arguments: {} })).isError).to.equal(false);
    await reader.close();

    const dteOnly = await agentWith(['dte:read']);
    const list = await dteOnly.callTool({ name: 'listar_recepcion', arguments: {} });
    expect(list.structuredContent).to.include({ code: 'forbidden' });
    const one = await dteOnly.callTool({ name: 'obtener_recepcion', arguments: { id: doc.id } });
    expect(one.structuredContent).to.include({ code: 'forbidden' });
    await dteOnly.close();
    expect(await pendingCount()).to.equal(n0);
    expect(registerEvents(902)).to.deep.equal([]);
  });

  it('without a session the consent step sends the user to the dashboard login and back to consent after logging in', async () => {
    const a = new AgentOAuth(cb.url, 'recepcion:read');
    const tr = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a });
    await new Client({ name: 'agente', version: '1.0.0' }).connect(tr).catch(() => undefined);
    const context = await browser.newContext(); // no dashboard session
    const page = await context.newPage();
    try {
      await page.goto(a.authorizationUrl!.href);
      expect(await page.textContent('h1')).to.equal('Inicia sesión para continuar');
      const href = (await page.getAttribute('#login', 'href'))!;
      const login = new URL(href);
      expect(login.origin + login.pathname).to.equal(`${origin}/dashboard/ingresar`);
      expect(login.searchParams.get('return_to')).to.match(/^\/oauth\/interaction\/[^/]+$/);
      await page.click('#login');
      await page.waitForSelector('body[data-ready="true"]');
      await page.fill('#login-email', email);
      await page.fill('#login-password', PASSWORD);
      await Promise.all([
        page.waitForURL(`${origin}${login.searchParams.get('return_to')}`, { timeout: 15_000 }),
        page.click('#form-login button[type=submit]'),
      ]);
      await page.waitForSelector('#approve');
      expect(await page.textContent('h1')).to.contain('Agente de prueba');
      await page.selectOption('#environment', 'cert');
      const before = cb.hits.length;
      await Promise.all([page.waitForURL(`${cb.url}**`, { timeout: 15_000 }), page.click('#approve')]);
      expect(cb.hits.length).to.equal(before + 1);
      const code = cb.hits[cb.hits.length - 1].get('code')!;
      await tr.finishAuth(code);
      const client = new Client({ name: 'agente', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: a }));
      expect((await client.callTool({ name: 'listar_recepcion', arguments: {} })).isError).to.equal(false);
      await client.close();
    } finally {
      await context.close();
    }
  });

  it('the login page never redirects to another site (open redirect): only same-origin paths are honoured', async () => {
    for (const evil of [
      'https://evil.example/robar',
      '//evil.example/robar',
      '/\\evil.example',
      'javascript:alert(1)',
    ]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        await page.goto(`${origin}/dashboard/ingresar?return_to=${encodeURIComponent(evil)}`);
        await page.waitForSelector('body[data-ready="true"]');
        await page.fill('#login-email', email);
        await page.fill('#login-password', PASSWORD);
        await Promise.all([
          page.waitForURL((u) => u.pathname !== '/dashboard/ingresar', { timeout: 15_000 }),
          page.click('#form-login button[type=submit]'),
        ]);
        const landed = new URL(page.url());
        expect(landed.origin, evil).to.equal(origin);
        expect(landed.pathname, evil).to.be.oneOf(['/dashboard/documentos', '/dashboard/organizacion']);
      } finally {
        await context.close();
      }
    }
  });
});
