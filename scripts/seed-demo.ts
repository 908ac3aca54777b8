/**
 * Seeds the local run with a demo issuer, so a first invoice can be issued with curl right after
 * `npm start` (README, "A first invoice"). Run by scripts/start-local.sh once the api and the SII
 * simulator answer; safe to run again (it reuses a seed whose key still works).
 *
 * It creates, through the same paths a real issuer uses:
 * 1. an organization, its company (RUT DEMO_RUT) and a certification API key (the api's seed command);
 * 2. a self-signed test .p12 for the signer DEMO_SIGNER_RUT (the engine's fixture maker), enrolled
 *    at the SII simulator as authorized to send for the company, with the company's resolution;
 * 3. the certificate uploaded with POST /certificates;
 * 4. folios for types 33, 34, 56, 61 and 52 requested with POST /caf/request (the simulator grants
 *    them, signed with its SII key).
 * 5. a dashboard user DEMO_EMAIL / DEMO_PASSWORD, owner of the organization (the seed command's
 *    --owner-email/--owner-password): open DTE_DASHBOARD_URL and sign in with it.
 * The values a client needs are written to .stack/demo.env and printed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createTestP12 } from '@dte/engine';

const ROOT = path.resolve(__dirname, '..');
const STACK_DIR = process.env.DTE_STACK_DIR ?? path.join(ROOT, '.stack');
const DEMO_ENV = path.join(STACK_DIR, 'demo.env');
const API_URL = process.env.DTE_API_URL ?? `http://127.0.0.1:${process.env.API_PORT ?? '3000'}/api/v1`;
const SII_URL = process.env.SII_BASE_URL ?? 'http://127.0.0.1:18080';
const DEMO_RUT = process.env.DEMO_RUT ?? '76086428-5';
const DEMO_SIGNER_RUT = process.env.DEMO_SIGNER_RUT ?? '11111111-1';
const DEMO_TYPES = [33, 34, 56, 61, 52];
/** folios requested of each type (DEMO_FOLIOS, 100; up to 10 000, POST /caf/request's bound): a load test asks for more */
const DEMO_FOLIOS = Number(process.env.DEMO_FOLIOS ?? 100);
const P12_PASSWORD = 'demo';
const DEMO_EMAIL = process.env.DEMO_EMAIL ?? 'demo@demo.cl';
const DEMO_PASSWORD = process.env.DEMO_PASSWORD ?? 'demo-dashboard-1';
const DASHBOARD_URL = `${new URL(API_URL).origin}/dashboard`;

interface DemoValues {
  DTE_API_URL: string;
  DTE_API_KEY: string;
  DTE_CERT_ID: string;
  DTE_RUT_EMISOR: string;
  DTE_DASHBOARD_URL: string;
  DTE_DASHBOARD_EMAIL: string;
  DTE_DASHBOARD_PASSWORD: string;
}

async function main(): Promise<void> {
  const existing = readDemoEnv();
  if (existing && (await keyWorks(existing))) {
    console.log(`[demo] reusing the demo issuer of ${DEMO_ENV}`);
    print(existing);
    return;
  }

  console.log(`[demo] seeding organization, company ${DEMO_RUT} and a certification API key`);
  const seedOut = execFileSync(
    'npm',
    [
      'run',
      '-s',
      'seed',
      '-w',
      '@dte/api',
      '--',
      '--org',
      'Demo SpA',
      '--rut',
      DEMO_RUT,
      '--env',
      'cert',
      '--razon-social',
      'DEMO SPA',
      '--giro',
      'Servicios informaticos',
      '--direccion',
      'Av. Providencia 1234',
      '--comuna',
      'Providencia',
      '--actividad',
      '620200',
      '--signer-rut',
      DEMO_SIGNER_RUT,
      '--resolucion-numero',
      '0',
      '--resolucion-fecha',
      '2024-01-15',
      '--owner-email',
      DEMO_EMAIL,
      '--owner-password',
      DEMO_PASSWORD,
      '--print',
      'json',
    ],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const seed = JSON.parse(lastJsonLine(seedOut)) as { api_key: string };
  const key = seed.api_key;

  console.log(`[demo] enrolling the signer ${DEMO_SIGNER_RUT} for ${DEMO_RUT} at the SII simulator`);
  await expectOk(
    await fetch(`${SII_URL}/admin/cert/companies/${DEMO_RUT}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        razonSocial: 'DEMO SPA',
        fchResol: '2024-01-15',
        nroResol: 0,
        senders: [DEMO_SIGNER_RUT],
      }),
    }),
    'enrolling at the SII simulator',
  );

  console.log('[demo] uploading a test certificate (POST /certificates)');
  const p12 = createTestP12({ rut: DEMO_SIGNER_RUT, name: 'Firmante Demo', password: P12_PASSWORD });
  const form = new FormData();
  form.set('file', new Blob([p12], { type: 'application/x-pkcs12' }), 'demo.p12');
  form.set('password', P12_PASSWORD);
  form.set('label', 'demo');
  const certRes = await fetch(`${API_URL}/certificates`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const cert = (await expectOk(certRes, 'uploading the certificate')) as { id: string };

  for (const tipo of DEMO_TYPES) {
    console.log(`[demo] requesting ${DEMO_FOLIOS} folios of type ${tipo} (POST /caf/request)`);
    await expectOk(
      await fetch(`${API_URL}/caf/request`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-cert-id': cert.id },
        body: JSON.stringify({ tipo_dte: tipo, cantidad: DEMO_FOLIOS }),
      }),
      `requesting folios of type ${tipo}`,
    );
  }

  const values: DemoValues = {
    DTE_API_URL: API_URL,
    DTE_API_KEY: key,
    DTE_CERT_ID: cert.id,
    DTE_RUT_EMISOR: DEMO_RUT,
    DTE_DASHBOARD_URL: DASHBOARD_URL,
    DTE_DASHBOARD_EMAIL: DEMO_EMAIL,
    DTE_DASHBOARD_PASSWORD: DEMO_PASSWORD,
  };
  fs.mkdirSync(STACK_DIR, { recursive: true });
  fs.writeFileSync(
    DEMO_ENV,
    '# Written by scripts/seed-demo.ts: the demo issuer of this local run. Not for production.\n' +
      Object.entries(values)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') +
      '\n',
    { mode: 0o600 },
  );
  print(values);
}

function readDemoEnv(): DemoValues | null {
  if (!fs.existsSync(DEMO_ENV)) return null;
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(DEMO_ENV, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  if (!out.DTE_API_KEY || !out.DTE_CERT_ID || !out.DTE_RUT_EMISOR || out.DTE_API_URL !== API_URL) return null;
  if (!out.DTE_DASHBOARD_EMAIL) return null; // written before the dashboard existed: seed the user too
  return out as unknown as DemoValues;
}

async function keyWorks(v: DemoValues): Promise<boolean> {
  const res = await fetch(`${API_URL}/caf`, { headers: { authorization: `Bearer ${v.DTE_API_KEY}` } });
  return res.status === 200;
}

async function expectOk(res: Response, what: string): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what} failed: HTTP ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

function lastJsonLine(out: string): string {
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.trim().startsWith('{'));
  if (!line) throw new Error(`the seed command printed no JSON: ${out}`);
  return line;
}

function print(v: DemoValues): void {
  console.log(`[demo] ready: source ${path.relative(process.cwd(), DEMO_ENV) || DEMO_ENV} for these values`);
  for (const [k, val] of Object.entries(v)) console.log(`[demo]   ${k}=${val}`);
}

main().catch((err: unknown) => {
  console.error(`[demo] ${(err as Error).message}`);
  process.exit(1);
});
