/**
 * The dashboard end to end in headless Chromium, against the real pipeline (api, signer,
 * sii-uploader, sii-poller as processes, the SII simulator, Kafka, PostgreSQL, Redis): sign up,
 * onboard a company, upload its certificate, request folios from the SII, issue an invoice with
 * the live preview, watch it reach EPR on the status timeline, download its XML. Screenshots of
 * each page go to the pipeline's log directory (printed).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestP12 } from '@dte/engine';
import {
  randomRut,
  startPipelineProcesses,
  type RunningPipeline,
} from '../../../test/support/pipeline-harness';
import { launchChromium } from '../src/browser';
import { PAGES } from '../src/pages';
import { captureDashboard, screenshotName } from '../src/screenshots';

const FCH_RESOL = '2024-01-15';

describe('dashboard in headless Chromium (issue 14)', function () {
  this.timeout(240_000);
  let pipe: RunningPipeline;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let shots: string;
  const rut = randomRut();
  const email = `duena-${Date.now()}@empresa.cl`;
  const password = 'una-clave-segura-1';
  let documentUrl = '';

  const ready = () => page.locator('body[data-ready="true"]').waitFor();
  const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  const notice = () => page.locator('#aviso');

  before(async () => {
    pipe = await startPipelineProcesses({ label: 'dashboard', sim: { registerMs: 300, stepMs: 80 } });
    origin = new URL(pipe.apiUrl).origin;
    shots = path.join(pipe.logDir, 'screenshots');
    fs.mkdirSync(shots, { recursive: true });
    console.log(`      dashboard screenshots: ${shots}`);
    // the company exists at the SII (certification) and its own certificate may send for it
    await pipe.simAdmin('PUT', `/admin/cert/companies/${rut}`, {
      razonSocial: 'FERRETERIA DEMO SPA',
      fchResol: FCH_RESOL,
      nroResol: 0,
      senders: [rut],
    });
    browser = await launchChromium();
    context = await browser.newContext({ acceptDownloads: true, locale: 'es-CL' });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await pipe?.close();
  });

  it('sends a visitor to the login page, and signs up', async () => {
    await page.goto(`${origin}/dashboard`);
    await page.waitForURL('**/dashboard/ingresar');
    expect(await page.locator('html').getAttribute('lang')).to.equal('es-CL');
    await shot('ingresar');
    await page.getByLabel('Correo electrónico').nth(1).fill(email);
    await page.getByLabel('Contraseña', { exact: true }).nth(1).fill('corta');
    await page.getByRole('button', { name: 'Crear cuenta' }).click();
    // live validation refuses a short password before anything is sent
    await expect(await page.locator('#signup-password-error').textContent()).to.include('10');
    await page.getByLabel('Contraseña', { exact: true }).nth(1).fill(password);
    await page.getByRole('button', { name: 'Crear cuenta' }).click();
    await page.waitForURL('**/dashboard/organizacion');
    await ready();
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'dte_session');
    expect(session).to.include({ httpOnly: true, sameSite: 'Strict' });
  });

  it('refuses a RUT with a wrong check digit as it is typed, then onboards the company', async () => {
    const bad = `${rut.slice(0, -1)}${rut.endsWith('1') ? '2' : '1'}`;
    await page.getByLabel('RUT de la empresa').first().fill(bad);
    expect(await page.locator('#org-rut-error').textContent()).to.include('dígito verificador');
    expect(await page.locator('#org-rut').getAttribute('aria-invalid')).to.equal('true');
    await page.getByLabel('RUT de la empresa').first().fill(rut);
    await page.getByLabel('Giro').fill('Venta de ferretería');
    await page.getByLabel('Dirección').fill('Av. Providencia 1234');
    await page.getByLabel('Comuna').fill('Providencia');
    await page.getByLabel('Código de actividad económica').fill('467300');
    await page.getByLabel('N° resolución de certificación SII').fill('0');
    await page.getByLabel('Fecha de la resolución').fill('15-01-2024'); // FCH_RESOL as typed in Chile
    // proof of control (issue 28): the certificate of a signer the SII authorizes for the RUT
    await page.getByLabel('Certificado .p12 o .pfx').setInputFiles({
      name: 'firma.p12',
      mimeType: 'application/x-pkcs12',
      buffer: createTestP12({ rut, password: 'secreto' }),
    });
    await page.getByLabel('Contraseña del certificado').fill('secreto');
    await shot('organizacion');
    await page.getByRole('button', { name: 'Registrar empresa' }).click();
    await page.waitForURL('**/dashboard/documentos');
    await ready();
    expect(await page.locator('#usuario').textContent()).to.include('FERRETERIA DEMO SPA (Dueño)');
  });

  it('uploads the certificate (.p12)', async () => {
    await page.getByRole('link', { name: 'Certificados' }).click();
    await ready();
    await page.getByLabel('Archivo .p12 o .pfx').setInputFiles({
      name: 'firma.p12',
      mimeType: 'application/x-pkcs12',
      buffer: createTestP12({ rut, password: 'secreto' }),
    });
    await page.getByLabel('Contraseña del certificado').fill('secreto');
    await page.getByLabel('Etiqueta').fill('Firma principal');
    await page.getByRole('button', { name: 'Subir certificado' }).click();
    await page.locator('#aviso.ok').waitFor();
    await page.locator('#tabla-certificados td', { hasText: 'Firma principal' }).waitFor();
    await shot('certificados');
  });

  it('requests folios from the SII and shows the inventory', async () => {
    await page.getByRole('link', { name: 'Folios' }).click();
    await ready();
    await page.getByLabel('Tipo de documento').selectOption('33');
    await page.getByLabel('Cantidad').fill('8');
    await page.getByRole('button', { name: 'Solicitar folios' }).click();
    await page.locator('#aviso.ok').waitFor();
    expect(await notice().textContent()).to.include('del 1 al 8');
    const row = page.locator('#tabla-resumen tbody tr').first();
    await row.locator('td', { hasText: /^8$/ }).waitFor();
    // 8 folios are at or below the low-folio threshold (20 by default): the page alerts
    expect(await page.locator('#alertas-folios').textContent()).to.include(
      'Quedan pocos folios de Factura electrónica (tipo 33)',
    );
    await shot('folios');
  });

  it('issues an invoice with a live preview of the totals', async () => {
    await page.getByRole('link', { name: 'Emitir' }).click();
    await ready();
    await page.getByLabel('RUT', { exact: true }).fill('77777777-8');
    expect(await page.locator('#e-rut-error').textContent()).to.include('dígito verificador');
    await page.getByLabel('RUT', { exact: true }).fill('77777777-7');
    await page.getByLabel('Razón social').fill('Cliente de Prueba SpA');
    await page.getByLabel('Giro').fill('Servicios informáticos');
    await page.getByLabel('Dirección').fill('Calle Falsa 123');
    await page.getByLabel('Comuna').fill('Ñuñoa');
    await page.getByLabel('Nombre').fill('Martillo');
    await page.getByLabel('Cantidad').fill('2');
    await page.getByLabel('Precio unitario').fill('10000');
    expect(await page.locator('#v-neto').textContent()).to.equal('$20.000');
    expect(await page.locator('#v-iva').textContent()).to.equal('$3.800');
    expect(await page.locator('#v-total').textContent()).to.equal('$23.800');
    await shot('emitir');
    await page.getByRole('button', { name: 'Emitir factura' }).click();
    await page.waitForURL(/\/dashboard\/documentos\/[0-9a-f-]{36}\?emitida=1$/);
    documentUrl = page.url().replace(/\?.*$/, '');
    await ready();
    expect(await page.locator('#doc-titulo').textContent()).to.equal('Factura electrónica N° 1');
    // a confirmation in words, and a queued document is never said to be accepted
    const confirmacion = (await notice().textContent()) ?? '';
    expect(confirmacion).to.include('Factura electrónica N° 1 emitida');
    expect(confirmacion).to.include('enviará al SII');
    expect(await page.locator('#doc-datos').textContent()).to.not.match(/acept/i);
  });

  it('shows the document reaching EPR on its status timeline', async () => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const estado = (await page.locator('#doc-estado').getAttribute('data-codigo')) ?? '';
      if (estado === 'EPR') break;
      if (Date.now() > deadline) throw new Error(`the document stayed at ${estado}`);
      await page.waitForTimeout(1000);
      await page.getByRole('button', { name: 'Actualizar estado' }).click();
      await page.locator('#doc-estado').waitFor();
    }
    expect(await page.locator('#doc-estado').textContent()).to.equal('Aceptado por el SII (EPR)');
    const timeline = (await page.locator('#doc-eventos').textContent()) ?? '';
    expect(timeline).to.include('Aceptado por el SII (EPR)');
    expect(timeline).to.include('En cola');
    expect(timeline).to.include('Firmado');
    expect(timeline).to.not.match(/\b(queued|signed|sending)\b/);
    expect(timeline).to.match(/\d{2}-\d{2}-\d{4} \d{2}:\d{2}/);
    await shot('documento');
    await page.getByRole('link', { name: '← Documentos' }).click();
    await ready();
    await page.locator('#tabla-documentos td', { hasText: '$23.800' }).waitFor();
    expect(await page.locator('#tabla-documentos tbody tr').count()).to.equal(1);
    const row = (await page.locator('#tabla-documentos tbody tr').first().textContent()) ?? '';
    expect(row).to.include('Factura electrónica (33)');
    expect(row).to.include('Cliente de Prueba SpA');
    expect(row).to.include('Aceptado por el SII (EPR)');
    expect(row).to.match(/\d{2}-\d{2}-\d{4}/);
    // one page only: no "Página siguiente"
    expect(await page.getByRole('button', { name: 'Página siguiente' }).isVisible()).to.equal(false);
    await shot('documentos');
  });

  it('pages through the documents: "Página siguiente" only while there is a next page, and each page is new', async () => {
    // two more invoices through the api with an API key of the organization (the session creates it)
    const created = await page.request.post(`${origin}/api/v1/api-keys`, {
      headers: { Origin: origin },
      data: { nombre: 'ERP de prueba', environment: 'cert', scopes: ['dte:read', 'dte:write'] },
    });
    expect(created.status(), await created.text()).to.equal(201);
    const key = ((await created.json()) as { key: string }).key;
    const me = await page.request.get(`${origin}/api/v1/organizations/me`);
    const rutEmisor = ((await me.json()) as { empresas: { rut: string }[] }).empresas[0]!.rut;
    for (const [n, [cliente, rutCliente]] of [
      ['Segundo Cliente Ltda', '11111111-1'],
      ['Tercer Cliente SpA', '22222222-2'],
    ].entries()) {
      const res = await page.request.post(`${origin}/api/v1/dtes`, {
        headers: { Authorization: `Bearer ${key}`, 'Idempotency-Key': `paginas-${rut}-${n}` },
        data: {
          tipo_dte: 33,
          rut_emisor: rutEmisor,
          fecha_emision: new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(
            new Date(),
          ),
          forma_pago: 1,
          receptor: {
            rut: rutCliente,
            razon_social: cliente,
            giro: 'Comercio',
            direccion: 'Calle 1',
            comuna: 'Santiago',
          },
          items: [
            {
              nombre: 'Tornillos',
              cantidad: 1,
              precio_unitario: 1000 * (n + 2),
              exento: false,
              monto_item: 1000 * (n + 2),
            },
          ],
        },
      });
      expect(res.status(), await res.text()).to.equal(202);
    }
    await page.goto(`${origin}/dashboard/documentos?limit=2`);
    await ready();
    const rows = page.locator('#tabla-documentos tbody tr[data-id]');
    expect(await rows.count()).to.equal(2);
    const next = page.getByRole('button', { name: 'Página siguiente' });
    expect(await next.isVisible()).to.equal(true);
    const first = await rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-id')));
    await next.click();
    await rows.nth(2).waitFor();
    const all = await rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-id')));
    expect(all).to.have.length(3);
    expect(all.slice(0, 2)).to.deep.equal(first);
    expect(new Set(all).size).to.equal(3);
    // the last page: the button is gone (hidden really hides it) and nothing repeats
    expect(await next.isVisible()).to.equal(false);
    const names = (await page.locator('#tabla-documentos tbody').textContent()) ?? '';
    for (const cliente of ['Cliente de Prueba SpA', 'Segundo Cliente Ltda', 'Tercer Cliente SpA'])
      expect(names).to.include(cliente);
  });

  it('remembers the receiver from the emission and offers it when issuing again', async () => {
    await page.getByRole('link', { name: 'Emitir' }).click();
    await ready();
    await page.getByLabel('RUT', { exact: true }).fill('77777777-7');
    await page.getByLabel('RUT', { exact: true }).dispatchEvent('change');
    expect(await page.getByLabel('Razón social').inputValue()).to.equal('Cliente de Prueba SpA');
    expect(await page.getByLabel('Comuna').inputValue()).to.equal('Ñuñoa');
  });

  it('downloads the signed XML of the document', async () => {
    await page.goto(documentUrl);
    await ready();
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#doc-xml').click()]);
    const xml = fs.readFileSync(await download.path(), 'latin1');
    expect(xml).to.match(/<Folio>1<\/Folio>/);
    expect(xml).to.include(`<RUTEmisor>${rut}</RUTEmisor>`);
    expect(xml).to.include('<Signature');
  });

  // ── PDF download (issue 8). `/api/v1/dtes/:id/pdf` is built in parallel on another branch: the
  // ── integrator enables this `it` (remove `.skip`) once both are merged.
  it('downloads the printed form (PDF) of the document, with its folio, RUTs and total', async () => {
    await page.goto(documentUrl);
    await ready();
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#doc-pdf').click()]);
    const file = await download.path();
    expect(fs.readFileSync(file).subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    // read as a person reads it: the page's text (poppler's pdftotext)
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    expect(text).to.match(/FACTURA\s+ELECTR[ÓO]NICA/i);
    expect(text).to.match(/N[°º]\s*1\b/);
    expect(text.replace(/\./g, '')).to.include(rut.replace(/\./g, ''));
    expect(text).to.include('77.777.777-7');
    expect(text).to.match(/23\.800/);
  });

  it('creates an API key shown once, and lists it by prefix only', async () => {
    await page.goto(`${origin}/dashboard/api-keys`);
    await ready();
    await page.getByLabel('Nombre').fill('ERP');
    await page.getByRole('button', { name: 'Crear API key' }).click();
    const key = (await page.locator('#key-valor').textContent()) ?? '';
    expect(key).to.match(/^sk_cert_[A-Za-z0-9_-]{43}$/);
    // the list reloads after the creation: wait for the new key's row
    await page.locator('#tabla-keys code', { hasText: `${key.slice(0, 16)}…` }).waitFor();
    const table = (await page.locator('#tabla-keys').textContent()) ?? '';
    expect(table).to.include(`${key.slice(0, 16)}…`);
    expect(table).to.not.include(key);
    await shot('api-keys');
  });

  it('explains the webhooks page (Bearer only), creates its API key in one step and shows the api refusing a non-public URL', async () => {
    await page.goto(`${origin}/dashboard/webhooks`);
    await ready();
    expect(await page.locator('.ayuda').textContent()).to.include('solo con una API key');
    await page.getByRole('button', { name: 'Crear API key de webhooks' }).click();
    await page.locator('#tabla-webhooks td', { hasText: 'Sin suscripciones.' }).waitFor();
    expect(await page.locator('#webhook-clave-estado').textContent()).to.include('Webhooks (panel)');
    await page.getByLabel('Dirección que recibe los avisos (https)').fill('https://127.0.0.1/hook');
    await page.getByRole('button', { name: 'Crear suscripción' }).click();
    await page.locator('#aviso.error').waitFor();
    expect(await notice().textContent()).to.include('https y pública');
    await shot('webhooks');
    // the key it created is a webhook-only key of the organization, listed (prefix only) with the others
    await page.goto(`${origin}/dashboard/api-keys`);
    await ready();
    const row = page.locator('#tabla-keys tbody tr', { hasText: 'Webhooks (panel)' });
    expect(await row.textContent())
      .to.include('Ver webhooks, Administrar webhooks')
      .and.include('Certificación');
  });

  it('activates a second certificate and deletes the first from the certificates page', async () => {
    await page.goto(`${origin}/dashboard/certificados`);
    await ready();
    await page.getByLabel('Archivo .p12 o .pfx').setInputFiles({
      name: 'respaldo.p12',
      mimeType: 'application/x-pkcs12',
      buffer: createTestP12({ rut, password: 'otra', name: 'Firma de respaldo' }),
    });
    await page.getByLabel('Contraseña del certificado').fill('otra');
    await page.getByLabel('Etiqueta').fill('Firma respaldo');
    await page.getByRole('button', { name: 'Subir certificado' }).click();
    await page.locator('#tabla-certificados td', { hasText: 'Firma respaldo' }).waitFor();
    const row = (label: string) => page.locator('#tabla-certificados tr', { hasText: label });
    await row('Firma respaldo').getByRole('button', { name: 'Activar' }).click();
    await page.locator('#aviso.ok', { hasText: 'Certificado activado.' }).waitFor();
    await row('Firma respaldo').locator('td', { hasText: /^Sí$/ }).waitFor();
    page.once('dialog', (d) => void d.accept());
    await row('Firma principal').getByRole('button', { name: 'Eliminar' }).click();
    await page.locator('#aviso.ok', { hasText: 'Certificado eliminado.' }).waitFor();
    await row('Firma principal').waitFor({ state: 'detached' });
  });

  it('shows the members and the audit log to the owner, newest first, in words', async () => {
    await page.goto(`${origin}/dashboard/miembros`);
    await ready();
    await page.locator('#tabla-miembros td', { hasText: email }).waitFor();
    expect(await page.locator('#tabla-miembros tbody').textContent()).to.include('Dueño');
    await shot('miembros');
    await page.goto(`${origin}/dashboard/auditoria`);
    await ready();
    const log = (await page.locator('#tabla-auditoria').textContent()) ?? '';
    for (const words of [
      'Registró la empresa',
      'Subió un certificado de firma',
      'Activó un certificado de firma',
      'Eliminó un certificado de firma',
      'Creó una API key',
    ])
      expect(log).to.include(words);
    // who by e-mail, on what by name; never a bare user:<uuid> or an empty {}
    expect(log).to.include(email);
    expect(log).to.include('Firma principal');
    expect(log).to.not.match(/user:[0-9a-f-]{36}|\{\}|certificate\.uploaded/);
    // newest first: the ids (bigint) strictly decrease down the page
    const ids = (await page
      .locator('#tabla-auditoria tbody tr')
      .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-id'))))) as number[];
    expect(ids.length).to.be.greaterThan(5);
    expect(ids).to.deep.equal([...ids].sort((x, y) => y - x));
    expect(await page.getByRole('button', { name: 'Más antiguos' }).isVisible()).to.equal(false);
    await shot('auditoria');
    // three at a time: "Más antiguos" appends the next older entries, none skipped or repeated
    await page.goto(`${origin}/dashboard/auditoria?limit=3`);
    await ready();
    const more = page.getByRole('button', { name: 'Más antiguos' });
    const rows = page.locator('#tabla-auditoria tbody tr[data-id]');
    expect(await rows.count()).to.equal(3);
    for (let shown = 3; shown < ids.length; shown += 3) {
      expect(await more.isVisible()).to.equal(true);
      await more.click();
      await rows.nth(Math.min(shown + 3, ids.length) - 1).waitFor();
    }
    const paged = (await rows.evaluateAll((r) =>
      r.map((x) => Number(x.getAttribute('data-id'))),
    )) as number[];
    expect(paged).to.deep.equal(ids);
    await more.waitFor({ state: 'hidden' });
    expect(await more.isVisible()).to.equal(false);
  });

  // ── every page of the registry opens without a console error (no 404 favicon, no script error,
  // ── no failed call) ──
  for (const p of PAGES) {
    it(`opens ${p.path} without a console error`, async () => {
      const tab = await context.newPage();
      const errors: string[] = [];
      tab.on('console', (m) => {
        if (m.type() === 'error') errors.push(`${m.text()} ${m.location().url}`);
      });
      tab.on('pageerror', (e) => errors.push(e.message));
      tab.on('response', (r) => {
        if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
      });
      try {
        const url = p.path.includes(':') ? documentUrl : `${origin}/dashboard${p.path}`;
        await tab.goto(url);
        await tab.locator('body[data-ready="true"]').waitFor();
        // the browser asks for the icon on its own: wait for it before judging
        await tab.waitForLoadState('networkidle');
        expect(errors, errors.join('\n')).to.deep.equal([]);
        expect(await tab.title()).to.match(/ · Panel DTE$/);
        // the layout holds: nothing wider than the window at 1 280 px nor on a phone
        for (const width of [1280, 390]) {
          await tab.setViewportSize({ width, height: 800 });
          const wide = await tab.evaluate<number>('document.documentElement.scrollWidth');
          expect(wide, `${p.path} at ${width}px`).to.be.at.most(width);
        }
      } finally {
        await tab.close();
      }
    });
  }

  it("regenerates the screenshots of every page (1 280 px and phone) with the screenshot script's capture", async () => {
    const out = process.env.DASHBOARD_SCREENSHOTS_DIR
      ? path.resolve(process.env.DASHBOARD_SCREENSHOTS_DIR)
      : path.join(shots, 'todas');
    const files = await captureDashboard({ url: `${origin}/dashboard`, email, password, out, browser });
    for (const p of PAGES) {
      expect(files).to.include(path.join(out, `${screenshotName(p.path)}.png`));
      expect(files).to.include(path.join(out, `${screenshotName(p.path)}-movil.png`));
    }
    console.log(`      screenshots of every page: ${out}`);
  });

  it('logs out: the session no longer opens the dashboard', async () => {
    await page.getByRole('button', { name: 'Salir' }).click();
    await page.waitForURL('**/dashboard/ingresar');
    await page.goto(`${origin}/dashboard/documentos`);
    await page.waitForURL('**/dashboard/ingresar');
    // a wrong password reads as words, without the api's code ("[unauthorized]")
    await ready();
    await page.getByLabel('Correo electrónico').first().fill(email);
    await page.getByLabel('Contraseña', { exact: true }).first().fill('no-es-la-clave-1');
    await page.getByRole('button', { name: 'Ingresar', exact: true }).click();
    await page.locator('#aviso.error').waitFor();
    const error = (await notice().textContent()) ?? '';
    expect(error).to.equal('Correo o contraseña incorrectos, o la sesión expiró.');
  });
});
