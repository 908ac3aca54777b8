/**
 * Test harness of the api: a real PostgreSQL schema with every migration (test/support/env.ts),
 * real Redis under a key prefix of its own, the SII simulator in-process, and the api listening
 * on a free port. Requests go over HTTP like any client's.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestP12 } from '@dte/engine';
import { startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';
import pino from 'pino';
import { Redis } from 'ioredis';
import { migratedDatabase, testStack, type MigratedDatabase } from '../../../../test/support/env';
import { loadConfig, type Config } from '../../src/config';
import type { ApiDeps } from '../../src/context';
import { startApi, type RunningApi } from '../../src/app';
import { LocalKeyWrapper, type KeyWrapper } from '@dte/secrets';
import { SqlCafDocumentsProbe } from '@dte/folios';
import { SiiFolioGrantClient } from '@dte/folios';
import { seedOrganization, type SeedInput, type SeedResult } from '../../src/seed';
import { accountStores } from '../../src/auth/session';
import { newRut } from '../../../../test/support/tenant-fixture';

export const DASHBOARD_ORIGIN = 'https://dashboard.test';

export interface TestApi {
  url: string;
  api: RunningApi;
  db: MigratedDatabase;
  redis: Redis;
  sim: RunningSimulator;
  config: Config;
  deps: ApiDeps;
  /** shifts the api's clock (ms) */
  advanceClock(ms: number): void;
  seed(input?: Partial<SeedInput>): Promise<SeedResult>;
  /**
   * A dashboard session of the user in Redis (as POST /auth/login makes), its cookie value;
   * `expSec` <= 0 gives one already past its absolute lifetime.
   */
  sessionCookie(userId: string, org: string | null, expSec?: number): Promise<string>;
  close(): Promise<void>;
}

export { newRut };

export async function startTestApi(
  opts: {
    env?: Record<string, string>;
    keys?: KeyWrapper;
    deps?: Partial<ApiDeps>;
    sim?: Parameters<typeof startSiiSimulator>[0];
    /** an existing migrated schema instead of a fresh one */
    db?: MigratedDatabase;
    /** a fixed port (e.g. when PUBLIC_BASE_URL must name it: the OAuth issuer); default a free one */
    port?: number;
  } = {},
): Promise<TestApi> {
  const stack = await testStack();
  const db = opts.db ?? (await migratedDatabase('api'));
  const redis = new Redis(stack.redisUrl, { keyPrefix: `t:${randomBytes(6).toString('hex')}:` });
  const sim = await startSiiSimulator({ port: 0, autoEnrol: false, cafKeyBits: 512, ...opts.sim });
  const masterKey = randomBytes(32).toString('base64');
  // every CAF must carry the simulator's SII signature (FRMA), as production checks the SII's keys
  const siiKeysFile = path.join(mkdtempSync(path.join(tmpdir(), 'api-sii-keys-')), 'sii-keys.json');
  writeFileSync(siiKeysFile, JSON.stringify(sim.siiKeys));
  const config = loadConfig({
    SII_CAF_KEYS_FILE: siiKeysFile,
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.redisUrl,
    MASTER_KEY: masterKey,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    DASHBOARD_ORIGINS: DASHBOARD_ORIGIN,
    SII_BASE_URL: sim.url,
    RATE_LIMIT_MAX: '10000',
    AUTH_FAILURE_MAX: '10000',
    // the tests sign up and log in many users from 127.0.0.1; the bursts are tested with their own
    SIGNUP_PER_ADDRESS_PER_HOUR: '10000',
    SIGNUP_GLOBAL_PER_MINUTE: '10000',
    LOGIN_GLOBAL_PER_MINUTE: '10000',
    LOW_FOLIOS_THRESHOLD: '5',
    ...opts.env,
  });
  let offset = 0;
  const deps: ApiDeps = {
    config,
    dataSource: db.dataSource,
    redis,
    keys:
      opts.keys ??
      new LocalKeyWrapper({ [config.masterKeyId]: Buffer.from(masterKey, 'base64') }, config.masterKeyId),
    folioGrant: new SiiFolioGrantClient({ baseUrl: sim.url, timeoutMs: 5000 }),
    cafDocuments: new SqlCafDocumentsProbe(db.dataSource),
    logger: pino({ level: process.env.API_TEST_LOG ?? 'silent' }),
    clock: () => new Date(Date.now() + offset),
    ...opts.deps,
  };
  const api = await startApi(deps, { port: opts.port ?? 0 });
  return {
    url: api.url,
    api,
    db,
    redis,
    sim,
    config,
    deps,
    advanceClock: (ms) => {
      offset += ms;
    },
    seed: (input = {}) =>
      seedOrganization(db.dataSource, {
        org: `org-${randomBytes(4).toString('hex')}`,
        rut: newRut(),
        env: 'cert',
        ...input,
      }),
    sessionCookie: (uid, org, expSec = 3600) => {
      const { sessions } = accountStores(deps);
      const at = deps.clock!();
      const created = expSec > 0 ? at : new Date(at.getTime() - (config.sessionAbsoluteSec - expSec) * 1000);
      return sessions.create(uid, org, created);
    },
    async close() {
      await api.close();
      await sim.close();
      redis.disconnect();
      await db.cleanup();
    },
  };
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One HTTP request; `json` sends a JSON body, `form` multipart, `raw` bytes as they are. */
export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  opts: {
    key?: string;
    cookie?: string;
    json?: unknown;
    form?: FormData;
    raw?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.cookie) headers.Cookie = `dte_session=${opts.cookie}`;
  let body: RequestInit['body'];
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['Content-Type'] = 'application/json';
  } else if (opts.raw !== undefined) {
    body = opts.raw;
    headers['Content-Type'] ??= 'application/json';
  } else if (opts.form) {
    body = opts.form;
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export function p12Form(p12: Buffer | null, password: string | null, label: string | null): FormData {
  const form = new FormData();
  if (p12) form.append('file', new Blob([p12]), 'cert.p12');
  if (password !== null) form.append('password', password);
  if (label !== null) form.append('label', label);
  return form;
}

export function cafForm(xml: string | null, tipoEsperado?: string): FormData {
  const form = new FormData();
  if (xml !== null) form.append('file', new Blob([Buffer.from(xml, 'latin1')]), 'caf.xml');
  if (tipoEsperado !== undefined) form.append('tipo_esperado', tipoEsperado);
  return form;
}

const p12Cache = new Map<string, Buffer>();
/** A test .p12 for a RUT (cached: RSA key generation is slow on this machine). */
export function testP12(rut: string, password = 'secreto', notAfter?: Date): Buffer {
  const k = `${rut}|${password}|${notAfter?.toISOString() ?? ''}`;
  let p = p12Cache.get(k);
  if (!p) {
    p = createTestP12({ rut, password, ...(notAfter ? { notAfter } : {}) });
    p12Cache.set(k, p);
  }
  return p;
}

/** Uploads a certificate for the seeded company (its own RUT) and returns the record. */
export async function uploadCert(t: TestApi, key: string, rut: string, label = 'main', password = 'secreto') {
  const res = await call(t.url, 'POST', '/certificates', {
    key,
    form: p12Form(testP12(rut, password), password, label),
  });
  if (res.status !== 201) throw new Error(`certificate upload failed: ${res.status} ${res.text}`);
  return res.body as { id: string; fingerprint_sha256: string; is_default: boolean };
}

/**
 * A dashboard user with `role` in the organization and a session of theirs (its cookie value).
 * With a password the user signs up over HTTP (and can log in); without, the user row is written.
 */
export async function dashboardMember(
  t: TestApi,
  orgId: string,
  role: 'owner' | 'admin' | 'member',
  opts: { email?: string; password?: string; nombre?: string } = {},
): Promise<{ userId: string; email: string; cookie: string }> {
  const email = opts.email ?? `${role}-${randomUUID()}@empresa.cl`;
  let userId: string;
  if (opts.password !== undefined) {
    const signup = await call<{ user: { id: string } }>(t.url, 'POST', '/auth/signup', {
      json: { email, password: opts.password, ...(opts.nombre !== undefined ? { nombre: opts.nombre } : {}) },
      headers: { Origin: DASHBOARD_ORIGIN },
    });
    if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
    userId = signup.body.user.id;
  } else {
    const [user]: { id: string }[] = await t.db.dataSource.query(
      'INSERT INTO users (email, name) VALUES ($1, $2) RETURNING id',
      [email, opts.nombre ?? null],
    );
    userId = user!.id;
  }
  await t.db.dataSource.query(
    'INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, $3)',
    [userId, orgId, role],
  );
  return { userId, email, cookie: await t.sessionCookie(userId, orgId) };
}

/** The RUT of a company, read from the database. */
export async function companyRut(t: TestApi, companyId: string): Promise<string> {
  const [row]: { rut: string }[] = await t.db.dataSource.query('SELECT rut FROM companies WHERE id = $1', [
    companyId,
  ]);
  if (!row) throw new Error(`no company ${companyId}`);
  return row.rut;
}

export { enrolAtSii, FCH_RESOL, simAdmin } from '../../../../test/support/sii-admin';

/** Everything of an error body except request_id (for "same answer" comparisons). */
export function withoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { request_id: _r, ...rest } = body;
  void _r;
  return rest;
}
