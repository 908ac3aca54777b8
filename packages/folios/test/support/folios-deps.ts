/**
 * FoliosDeps for the folios package's tests, with real parts: a migrated PostgreSQL schema, Redis
 * under a key prefix of its own, a local master key, the SII simulator in-process (its folio grant
 * and the SII keys that sign its CAFs, read as SII_CAF_KEYS_FILE is), and a tenant whose company
 * holds a real signing certificate. No HTTP api.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { uploadCertificate } from '@dte/certificates';
import { createTestP12 } from '@dte/engine';
import { LocalKeyWrapper } from '@dte/secrets';
import { startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';
import type { Principal } from '@dte/tenancy';
import { migratedDatabase, testStack, type MigratedDatabase } from '../../../../test/support/env';
import { apiKeyPrincipal, insertTenant, type Tenant } from '../../../../test/support/tenant-fixture';
import { loadSiiCafKeys, SiiFolioGrantClient, SqlCafDocumentsProbe, type FoliosDeps } from '../../src';

export interface FoliosHarness {
  deps: FoliosDeps;
  db: MigratedDatabase;
  sim: RunningSimulator;
  close(): Promise<void>;
}

export async function startFoliosHarness(
  config: Partial<FoliosDeps['config']> = {},
  label = 'folios',
): Promise<FoliosHarness> {
  const stack = await testStack();
  const db = await migratedDatabase(label);
  const redis = new Redis(stack.redisUrl, { keyPrefix: `t:${randomBytes(6).toString('hex')}:` });
  const sim = await startSiiSimulator({ port: 0, autoEnrol: false, cafKeyBits: 512 });
  const keysFile = path.join(mkdtempSync(path.join(tmpdir(), 'folios-sii-keys-')), 'sii-keys.json');
  writeFileSync(keysFile, JSON.stringify(sim.siiKeys));
  const deps: FoliosDeps = {
    config: {
      lowFoliosThreshold: 5,
      cafRequestLockSec: 60,
      cafAutoIntervalSec: 60,
      siiCafKeys: loadSiiCafKeys(keysFile),
      ...config,
    },
    dataSource: db.dataSource,
    redis,
    keys: new LocalKeyWrapper({ k1: randomBytes(32) }, 'k1'),
    logger: pino({ level: process.env.API_TEST_LOG ?? 'silent' }),
    folioGrant: new SiiFolioGrantClient({ baseUrl: sim.url, timeoutMs: 5000 }),
    cafDocuments: new SqlCafDocumentsProbe(db.dataSource),
  };
  return {
    deps,
    db,
    sim,
    async close() {
      await sim.close();
      redis.disconnect();
      await db.cleanup();
    },
  };
}

/** A company with a real certificate of its own RUT, and its API key's principal. */
export async function companyWithCertificate(
  h: FoliosHarness,
  opts: Parameters<typeof insertTenant>[1] = {},
): Promise<{ tenant: Tenant; principal: Principal }> {
  const tenant = await insertTenant(h.deps.dataSource, opts);
  await uploadCertificate(
    h.deps.dataSource,
    h.deps.keys,
    tenant.organizationId,
    { p12: createTestP12({ rut: tenant.rut, password: 'clave' }), password: 'clave', label: 'firma' },
    new Date(),
  );
  return { tenant, principal: apiKeyPrincipal(tenant, ['caf:write', 'dte:write']) };
}
