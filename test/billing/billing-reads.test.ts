/**
 * What an owner sees of plans and consumption (issue 32), over the real stack: GET /billing (API
 * key with billing:read, owner and admin sessions; 403 otherwise), the MCP tool consultar_plan
 * through the MCP SDK's client behind OAuth (consent in headless Chromium), and the dashboard's
 * "Plan y consumo" page in headless Chromium — the same numbers everywhere, with the warning at
 * 80 % and at the limit; the e-mails to owners at 80 % and 100 % (once each, a local SMTP
 * receiver), which say the month and the numbers as the page does; the consumption metric per plan;
 * the operator commands' bad input changing nothing.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { recordPayment, setPlan } from '@dte/accounts';
import { periodoOf } from '@dte/billing';
import { reportBillingMetrics, startBillingNotices } from '../../services/api/src/routes/billing';
import {
  call,
  dashboardMember,
  DASHBOARD_ORIGIN,
  startTestApi,
  type TestApi,
} from '../../services/api/test/support/test-api';
import { body, emit, expectSchema, orgWithCafs, type DteOrg } from '../../services/api/test/dtes-fixtures';
import { SmtpSink } from '../../services/webhooks/test/support/smtp';
import { testStack } from '../support/env';
import { freePort } from '../support/pipeline-harness';
import { AgentOAuth, CHROMIUM_ARGS, callbackServer, consentInBrowser } from '../agents/oauth-agent';

const run = promisify(execFile);
const PASSWORD = 'clave-segura-123';

describe('billing: GET /billing, consultar_plan and the "Plan y consumo" page (issue 32)', function () {
  this.timeout(300_000);
  let t: TestApi;
  let origin: string;
  let o: DteOrg;
  let browser: Browser;
  let cb: Awaited<ReturnType<typeof callbackServer>>;
  let ownerEmail: string;
  let ownerCookie: string;
  let sink: SmtpSink;

  /** a dashboard user with `role` in o's organization, and a session cookie of theirs */
  const member = (role: 'owner' | 'admin' | 'member') =>
    dashboardMember(t, o.orgId, role, { password: PASSWORD, nombre: role });

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await startTestApi({ port, env: { PUBLIC_BASE_URL: `${origin}/api/v1` } });
    o = await orgWithCafs(t, { tipos: [33] });
    // the seeded organization's own owner has no password: the owner here is a real account
    await t.db.dataSource.query(`DELETE FROM memberships WHERE organization_id = $1`, [o.orgId]);
    const owner = await member('owner');
    ownerEmail = owner.email;
    ownerCookie = owner.cookie;
    await setPlan(t.db.dataSource, {
      organization: o.orgId,
      plan: 'pro',
      monthlyLimit: '5',
      env: 'cert',
      operator: 'Ana Operadora',
    });
    await recordPayment(t.db.dataSource, {
      organization: o.orgId,
      amountClp: '29990',
      paidOn: '2026-11-02',
      periodo: '2026-11',
      reference: 'transferencia 123',
      operator: 'Ana Operadora',
    });
    for (let i = 0; i < 4; i++) expect((await emit(t, o, body(33, o.rut))).status).to.equal(202);
    cb = await callbackServer();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    sink = await new SmtpSink().start();
  });
  after(async () => {
    await browser?.close();
    cb?.close();
    await sink?.close();
    await t?.close();
  });

  const billingByKey = async () => {
    const res = await call(t.url, 'GET', '/billing', { key: o.key });
    expect(res.status, res.text).to.equal(200);
    expectSchema('billing.schema.json', res.body);
    return res.body;
  };

  /** The page in Chromium with a session: what it shows. */
  async function planPage(cookie: string) {
    const context = await browser.newContext();
    await context.addCookies([{ name: 'dte_session', value: cookie, url: origin }]);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${origin}/dashboard/plan`);
    await page.waitForSelector('body[data-plan-ready="true"]');
    await page.waitForSelector('body[data-ready="true"]');
    const shown = {
      plan: await page.textContent('#plan-nombre'),
      periodo: await page.textContent('#plan-periodo'),
      cert: {
        used: await page.getAttribute('#consumo-cert', 'data-used'),
        limit: await page.getAttribute('#consumo-cert', 'data-limit'),
        text: await page.textContent('#consumo-cert-texto'),
        bar: await page.$eval('#consumo-cert progress', (p) => {
          const bar = p as unknown as { value: number; max: number };
          return [bar.value, bar.max];
        }),
      },
      prod: {
        used: await page.getAttribute('#consumo-prod', 'data-used'),
        limit: await page.getAttribute('#consumo-prod', 'data-limit'),
        text: await page.textContent('#consumo-prod-texto'),
      },
      alerts: await page.$$eval('#plan-alertas .aviso', (els) =>
        els.map((e) => [e.className, e.textContent]),
      ),
      chartBars: await page.$$eval('#grafico-historial rect.barra', (els) =>
        els.map((e) => e.getAttribute('data-periodo')),
      ),
      historyRows: await page.$$eval('#tabla-historial tbody tr', (els) =>
        els.map((e) => [...e.children].map((c) => c.textContent)),
      ),
      payments: await page.$$eval('#tabla-pagos tbody tr', (els) =>
        els.map((e) => [...e.children].map((c) => c.textContent)),
      ),
      nav: await page.$$eval('nav a[aria-current="page"]', (els) => els.map((e) => e.textContent)),
      errors,
    };
    await context.close();
    return shown;
  }

  it('GET /billing answers the plan, the month and each environment with the key scope billing:read', async () => {
    const b = await billingByKey();
    const periodo = periodoOf(new Date());
    expect(b).to.deep.include({ plan: 'pro', periodo });
    expect(b.environments).to.deep.equal({
      cert: { usedThisMonth: 4, limit: 5 },
      prod: { usedThisMonth: 0, limit: 100 },
    });
    const historial = b.historial as { periodo: string; cert: number; prod: number }[];
    expect(historial).to.have.length(6);
    expect(historial[5]).to.deep.equal({ periodo, cert: 4, prod: 0 });
    expect(
      (b.payments as Record<string, unknown>[]).map((p) => ({ ...p, id: 'x', recorded_at: 'x' })),
    ).to.deep.equal([
      {
        id: 'x',
        amount_clp: 29990,
        periodo: '2026-11',
        paid_on: '2026-11-02',
        reference: 'transferencia 123',
        recorded_at: 'x',
      },
    ]);
    // the OpenAPI document names the route and its schema
    const doc = await call<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>(
      t.url,
      'GET',
      '/openapi.json',
    );
    expect(doc.status).to.equal(200);
    expect(JSON.stringify(doc.body.paths['/billing']?.get?.responses['200'])).to.contain('Billing');
  });

  it('a key without billing:read gets 403 forbidden with next_action; a member session gets 403; owners and admins read it', async () => {
    const noScope = await t.seed({ scopes: ['dte:read', 'dte:write'] });
    const refused = await call(t.url, 'GET', '/billing', { key: noScope.api_key });
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body).to.include({ code: 'forbidden', next_action: 'use_api_key_with_required_scope' });
    expect(refused.body.detail).to.deep.equal({ requiredScope: 'billing:read' });

    const m = await member('member');
    const asMember = await call(t.url, 'GET', '/billing', { cookie: m.cookie });
    expect(asMember.status, asMember.text).to.equal(403);
    expect(asMember.body.code).to.equal('forbidden');
    const shown = await planPage(m.cookie);
    expect(shown.alerts).to.have.length(1);
    expect(shown.alerts[0]![1]).to.contain('Solo los dueños y administradores');

    const a = await member('admin');
    const asAdmin = await call(t.url, 'GET', '/billing', { cookie: a.cookie });
    expect(asAdmin.status, asAdmin.text).to.equal(200);
    const asOwner = await call(t.url, 'GET', '/billing', { cookie: ownerCookie });
    expect(asOwner.body).to.deep.equal(await billingByKey());
    // an owner creates a key with only billing:read (e.g. for an accounting tool): it reads, nothing else
    const created = await call(t.url, 'POST', '/api-keys', {
      cookie: ownerCookie,
      json: { nombre: 'Contabilidad', environment: 'cert', scopes: ['billing:read'] },
      headers: { Origin: DASHBOARD_ORIGIN },
    });
    expect(created.status, created.text).to.equal(201);
    const billingKey = created.body.key as string;
    const byBillingKey = await call(t.url, 'GET', '/billing', { key: billingKey });
    expect(byBillingKey.status, byBillingKey.text).to.equal(200);
    expect(byBillingKey.body).to.deep.equal(await billingByKey());
    expect((await call(t.url, 'GET', '/dtes', { key: billingKey })).status).to.equal(403);
  });

  it('GET /billing, consultar_plan over MCP and the dashboard page show the same numbers, with the warning at 80 % and then at the limit', async () => {
    const rest = await billingByKey();
    // MCP: the SDK's client authorized by the owner for billing:read
    const a = new AgentOAuth(cb.url, 'billing:read');
    const tr = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: a });
    await new Client({ name: 'agente', version: '1.0.0' }).connect(tr).catch(() => undefined);
    await tr.finishAuth(
      await consentInBrowser(browser, { origin, cookie: ownerCookie, cb }, a.authorizationUrl!, {
        grant: ['billing:read'],
      }),
    );
    const agent = new Client({ name: 'agente', version: '1.0.0' });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: a }));
    const { tools } = await agent.listTools();
    const tool = tools.find((x) => x.name === 'consultar_plan');
    expect(tool?.annotations?.readOnlyHint).to.equal(true);
    const mcp = await agent.callTool({ name: 'consultar_plan', arguments: {} });
    expect(mcp.isError, JSON.stringify(mcp.structuredContent)).to.equal(false);
    expect(mcp.structuredContent).to.deep.equal(rest);

    // the page: 4 of 5 in certification (80 %): a warning, the bar at 4/5
    let shown = await planPage(ownerCookie);
    expect(shown.errors).to.deep.equal([]);
    expect(shown.nav).to.deep.equal(['Plan y consumo']);
    expect(shown.plan).to.equal('pro');
    expect(shown.cert).to.deep.include({
      used: '4',
      limit: '5',
      text: '4 de 5 documentos (80 %)',
      bar: [4, 5],
    });
    expect(shown.prod).to.deep.equal({ used: '0', limit: '100', text: '0 de 100 documentos (0 %)' });
    expect(shown.alerts).to.have.length(1);
    expect(shown.alerts[0]![0]).to.contain('advertencia');
    expect(shown.alerts[0]![1]).to.contain('Ha usado el 80 % de los documentos de certificación');
    expect(shown.chartBars).to.deep.equal((rest.historial as { periodo: string }[]).map((h) => h.periodo));
    expect(shown.historyRows[0]!.slice(1)).to.deep.equal(['0', '4']);
    expect(shown.payments).to.deep.equal([
      ['02-11-2026', 'noviembre de 2026', '$29.990', 'transferencia 123'],
    ]);

    // the fifth document reaches the limit: all three say 5 of 5, the page says emissions stop
    expect((await emit(t, o, body(33, o.rut))).status).to.equal(202);
    const full = await billingByKey();
    expect((full.environments as Record<string, unknown>).cert).to.deep.equal({ usedThisMonth: 5, limit: 5 });
    const mcpFull = await agent.callTool({ name: 'consultar_plan', arguments: {} });
    expect(mcpFull.structuredContent).to.deep.equal(full);
    shown = await planPage(ownerCookie);
    expect(shown.cert).to.deep.include({ used: '5', limit: '5', text: '5 de 5 documentos (100 %)' });
    expect(shown.alerts).to.have.length(1);
    expect(shown.alerts[0]![0]).to.contain('error');
    expect(shown.alerts[0]![1]).to.contain('Alcanzó el límite mensual de certificación (5 documentos)');
    await agent.close();
  });

  it("at the limit, the dashboard's emission form says so in Spanish with the month's numbers", async () => {
    const context = await browser.newContext();
    try {
      await context.addCookies([{ name: 'dte_session', value: ownerCookie, url: origin }]);
      const page = await context.newPage();
      await page.goto(`${origin}/dashboard/emitir`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.getByLabel('RUT', { exact: true }).fill('77777777-7');
      await page.getByLabel('Razón social').fill('Cliente de Prueba SpA');
      await page.getByLabel('Giro').fill('Servicios informáticos');
      await page.getByLabel('Dirección').fill('Calle Falsa 123');
      await page.getByLabel('Comuna').fill('Ñuñoa');
      await page.getByLabel('Nombre').fill('Martillo');
      await page.getByLabel('Cantidad').fill('1');
      await page.getByLabel('Precio unitario').fill('10000');
      const answer = page.waitForResponse((r) => r.url().includes('/api/v1/dtes'));
      await page.getByRole('button', { name: 'Emitir factura' }).click();
      expect((await answer).status()).to.equal(402);
      await page.locator('#aviso.error').waitFor();
      expect(await page.textContent('#aviso')).to.equal(
        'Se alcanzó el límite mensual de documentos de su plan (5 de 5).',
      );
    } finally {
      await context.close();
    }
  });

  it('e-mails the owners once at 80 % and once at the limit, through SMTP', async () => {
    const notices = startBillingNotices({
      ...t.deps,
      config: { ...t.deps.config, smtpUrl: sink.url, deliveryIntervalSec: 1 },
    });
    try {
      const deadline = Date.now() + 20_000;
      while (sink.mails.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      // one more sweep finds nothing left to send
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      notices.stop();
    }
    expect(sink.mails).to.have.length(2);
    const parsed = await Promise.all(sink.mails.map((m) => simpleParser(m.raw)));
    expect(sink.mails.map((m) => m.to)).to.deep.equal([[ownerEmail], [ownerEmail]]);
    const subjects = parsed.map((p) => p.subject ?? '').sort();
    expect(subjects[0]).to.match(/^Aviso de consumo: .* usó el 80 % de sus documentos de /);
    expect(subjects[1]).to.match(/^Plan agotado: .* alcanzó su límite de documentos de /);
    const mailText = parsed.map((p) => p.text ?? '').join('\n');
    expect(mailText).to.contain('emitió 5 de 5 documentos');
    // the mail and the "Plan y consumo" page say the month and the numbers alike (@dte/es-cl)
    const shown = await planPage(ownerCookie);
    expect(shown.cert.text).to.equal('5 de 5 documentos (100 %)');
    expect(mailText).to.contain(`emitió ${shown.cert.text!.replace(/ documentos.*$/, '')} documentos`);
    expect(mailText).to.contain(`en certificación durante ${shown.periodo}`);
    expect(parsed.map((p) => p.subject ?? '').every((s) => s.endsWith(`de ${shown.periodo}`))).to.equal(true);
    const rows: { threshold: number; sent: boolean }[] = await t.db.dataSource.query(
      `SELECT threshold, sent_at IS NOT NULL AS sent FROM billing_notices WHERE organization_id = $1 ORDER BY threshold`,
      [o.orgId],
    );
    expect(rows).to.deep.equal([
      { threshold: 80, sent: true },
      { threshold: 100, sent: true },
    ]);
  });

  it('the metric counts this month per plan and environment, without an organization label', async () => {
    const stop = reportBillingMetrics(t.deps);
    try {
      const res = await fetch(`${origin}/metrics`);
      const text = await res.text();
      const lines = text.split('\n').filter((l) => l.startsWith('dte_billing_documents_month{'));
      expect(lines).to.include('dte_billing_documents_month{plan="pro",sii_env="cert"} 5');
      expect(lines.join('\n')).to.not.contain('organization');
    } finally {
      stop();
    }
  });

  it('the operator commands: bad input is a clear error and changes nothing; a good one is audited', async () => {
    const snapshot = async () =>
      JSON.stringify(
        await t.db.dataSource.query(
          `SELECT (SELECT json_agg(p ORDER BY organization_id) FROM billing_plans p) AS plans,
                  (SELECT json_agg(a ORDER BY organization_id, sii_env) FROM billing_allowances a) AS allowances,
                  (SELECT json_agg(y ORDER BY id) FROM billing_payments y) AS payments,
                  (SELECT count(*) FROM audit_log) AS audit`,
        ),
      );
    const before = await snapshot();
    const bad: [Parameters<typeof setPlan>[1], RegExp][] = [
      [{ organization: randomUUID(), plan: 'pro', monthlyLimit: '10', operator: 'Ana' }, /no organization/],
      [{ organization: '11111111-2', plan: 'pro', monthlyLimit: '10', operator: 'Ana' }, /valid RUT/],
      [
        { organization: o.orgId, plan: 'platino', monthlyLimit: '10', operator: 'Ana' },
        /unknown plan "platino"/,
      ],
      [{ organization: o.orgId, plan: 'pro', monthlyLimit: '-1', operator: 'Ana' }, /--monthly-limit/],
      [{ organization: o.orgId, plan: 'pro', monthlyLimit: 'diez', operator: 'Ana' }, /--monthly-limit/],
      [{ organization: o.orgId, plan: 'pro', monthlyLimit: '1.5', operator: 'Ana' }, /--monthly-limit/],
      [{ organization: o.orgId, plan: 'pro', monthlyLimit: '10', env: 'test', operator: 'Ana' }, /--env/],
      [{ organization: o.orgId, plan: 'pro', monthlyLimit: '10', operator: ' ' }, /--operator/],
    ];
    for (const [input, message] of bad) {
      const err = await setPlan(t.db.dataSource, input).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message, JSON.stringify(input)).to.match(message);
    }
    for (const amount of ['0', '-5', 'mil', '12.5']) {
      const err = await recordPayment(t.db.dataSource, {
        organization: o.orgId,
        amountClp: amount,
        operator: 'Ana',
      }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.match(/--amount/);
    }
    expect(await snapshot()).to.equal(before);

    // the command itself, as an operator runs it
    const { databaseUrl } = await testStack();
    const env = { ...process.env, DATABASE_URL: databaseUrl, DATABASE_SCHEMA: t.db.schema };
    const cli = ['tsx', 'packages/accounts/src/cli/set-plan.ts'];
    const failed = await run(
      'npx',
      [...cli, '--org', o.orgId, '--plan', 'pro', '--monthly-limit=-3', '--operator', 'Ana'],
      {
        env,
      },
    ).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).to.equal(1);
    expect(failed?.stderr).to.contain('set-plan failed: --monthly-limit');
    expect(await snapshot()).to.equal(before);
    const ok = await run(
      'npx',
      [
        ...cli,
        '--org',
        o.orgId,
        '--plan',
        'pro',
        '--monthly-limit',
        '6',
        '--env',
        'cert',
        '--operator',
        'Ana Operadora',
      ],
      {
        env,
      },
    );
    expect(JSON.parse(ok.stdout)).to.deep.include({
      organization_id: o.orgId,
      plan: 'pro',
      sii_env: 'cert',
      monthly_limit: 6,
    });
    const audit: { actor: string; detail: Record<string, unknown> }[] = await t.db.dataSource.query(
      `SELECT actor, detail FROM audit_log WHERE organization_id = $1 AND action = 'organization.plan_set' ORDER BY id DESC LIMIT 1`,
      [o.orgId],
    );
    expect(audit[0]).to.deep.include({ actor: 'operator:Ana Operadora' });
    expect(audit[0]!.detail).to.deep.include({ plan: 'pro', sii_env: 'cert', monthly_limit: 6 });
    // the raised limit lets the next document through at once
    expect((await emit(t, o, body(33, o.rut))).status).to.equal(202);
  });
});
