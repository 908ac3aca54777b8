/**
 * One es-CL rule on both sides (issue 31): billing's owner e-mail (Node) and the dashboard's
 * pages (headless Chromium, the module the dashboard serves) show the same amounts, numbers,
 * dates, instants and months, because both run the one file of @dte/es-cl. The browser's Intl and
 * Node's are different builds, so the values are compared, not assumed. The full page beside the
 * real mail is in billing-reads.test.ts.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import Koa from 'koa';
import type { Browser } from 'playwright-core';
import { noticeMail } from '@dte/billing';
import { dashboard, DASHBOARD_PATH, ES_CL_MODULE_PATH } from '@dte/dashboard';
import * as esCl from '@dte/es-cl';
import { launchChromium } from '../../packages/dashboard/src/browser';

const SAMPLES = {
  amounts: [0, 999, 1234, 23800, 1234567, 1543209, 987654321, 1499.6],
  dates: ['2026-11-02', '2027-01-31', '2028-02-29'],
  // summer (UTC-3), winter (UTC-4), and around both changes of 2026 (5 April, 6 September)
  instants: [
    '2026-01-15T15:30:00Z',
    '2026-07-01T02:05:00Z',
    '2026-04-05T02:30:00Z',
    '2026-04-05T04:30:00Z',
    '2026-09-06T03:30:00Z',
    '2026-09-06T04:30:00Z',
  ],
  months: ['2026-11', '2027-01', '2026-09'],
  typed: ['2/11/2026', '29-02-2027', '31-12-2026'],
};

type Shown = Record<'clp' | 'entero' | 'dia' | 'fecha' | 'mes' | 'diaApi', unknown[]>;

function shownBy(f: typeof esCl): Shown {
  return {
    clp: SAMPLES.amounts.map((n) => f.clp(n)),
    entero: SAMPLES.amounts.map((n) => f.entero(n)),
    dia: SAMPLES.dates.map((d) => f.dia(d)),
    fecha: SAMPLES.instants.map((i) => f.fecha(i)),
    mes: SAMPLES.months.map((m) => f.mes(m)),
    diaApi: SAMPLES.typed.map((t) => f.diaApi(t)),
  };
}

describe("es-CL formats: billing's mail and the dashboard's pages show the same values", function () {
  this.timeout(60_000);
  let browser: Browser;
  let server: http.Server;
  let origin: string;
  let inBrowser: Shown;

  before(async () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path !== '/') return next();
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = '<!doctype html><html lang="es-CL"><title>es-CL</title></html>';
    });
    app.use(dashboard());
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    // the pages' own module (lib/format.js), which re-exports the served @dte/es-cl file; the same
    // computations as shownBy, written out (a string: no transpiler touches what the browser runs)
    inBrowser = (await page.evaluate(`(async () => {
      const f = await import('${DASHBOARD_PATH}/static/lib/format.js');
      const s = ${JSON.stringify(SAMPLES)};
      return {
        clp: s.amounts.map((n) => f.clp(n)),
        entero: s.amounts.map((n) => f.entero(n)),
        dia: s.dates.map((d) => f.dia(d)),
        fecha: s.instants.map((i) => f.fecha(i)),
        mes: s.months.map((m) => f.mes(m)),
        diaApi: s.typed.map((t) => f.diaApi(t)),
      };
    })()`)) as Shown;
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('the dashboard serves the very file the server imports', async () => {
    const res = await fetch(`${origin}${DASHBOARD_PATH}${ES_CL_MODULE_PATH}`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(await res.text()).to.equal(readFileSync(require.resolve('@dte/es-cl'), 'utf8'));
  });

  it('Chromium and Node show the same CLP, numbers, dates, instants and months', () => {
    expect(inBrowser).to.deep.equal(shownBy(esCl));
    expect(inBrowser.clp).to.deep.equal([
      '$0',
      '$999',
      '$1.234',
      '$23.800',
      '$1.234.567',
      '$1.543.209',
      '$987.654.321',
      '$1.500',
    ]);
    expect(inBrowser.dia).to.deep.equal(['02-11-2026', '31-01-2027', '29-02-2028']);
    expect(inBrowser.fecha).to.deep.equal([
      '15-01-2026 12:30',
      '30-06-2026 22:05',
      '04-04-2026 23:30',
      '05-04-2026 00:30',
      '05-09-2026 23:30',
      '06-09-2026 01:30',
    ]);
    expect(inBrowser.mes).to.deep.equal(['noviembre de 2026', 'enero de 2027', 'septiembre de 2026']);
    expect(inBrowser.diaApi).to.deep.equal(['2026-11-02', null, '2026-12-31']);
  });

  it("billing's notice says the numbers and the month exactly as the dashboard shows them", () => {
    const mail = noticeMail(
      {
        organization_id: 'x',
        sii_env: 'prod',
        periodo: '2026-11',
        threshold: 80,
        used: 1234567,
        monthly_limit: 1543209,
        organization: 'Ferretería Sur',
      },
      ['duena@empresa.cl'],
    );
    const [used, limit] = [inBrowser.entero[4], inBrowser.entero[5]];
    expect([used, limit]).to.deep.equal(['1.234.567', '1.543.209']);
    expect(mail.text).to.contain(`emitió ${used} de ${limit} documentos`);
    expect(mail.text).to.contain(`durante ${inBrowser.mes[0]}`);
    expect(mail.subject).to.match(new RegExp(`de ${inBrowser.mes[0]}$`));
  });
});
