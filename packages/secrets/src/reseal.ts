/**
 * Master key rotation. A deployment names its current master key (MASTER_KEY, MASTER_KEY_ID:
 * new secrets are sealed under it) and the previous ones (MASTER_KEYS_PREVIOUS, `id:base64,…`:
 * they still open the rows sealed before). `resealAll` then re-seals every stored secret whose
 * key id is not the current one (certificates' .p12 and password, CAF stamping keys, webhook
 * signing secrets) and seals the webhook secrets still stored in clear; once it reports nothing
 * left, the previous keys can be removed from the configuration.
 */
import { cafKeyAad, certificateAad, webhookSecretAad } from './aad';
import { LocalKeyWrapper, open, seal, type KeyWrapper } from './envelope';

/** Rows re-sealed per transaction-less batch (each row is updated on its own, compare-and-set). */
export const RESEAL_BATCH = 100;

export interface ResealSource {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export interface ResealReport {
  certificates: number;
  cafs: number;
  webhookSecrets: number;
  /** webhook secrets that were stored in clear and are sealed now */
  webhookSecretsInClear: number;
  /** rows that could not be opened (left as they are, named by id) */
  failed: string[];
}

/**
 * Parses MASTER_KEYS_PREVIOUS: `id:base64,id:base64` (each the base64 of 32 bytes). Empty: none.
 */
export function parsePreviousMasterKeys(raw: string | undefined): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const part of (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const i = part.indexOf(':');
    if (i <= 0) throw new Error('MASTER_KEYS_PREVIOUS must be id:base64 pairs separated by commas');
    const key = Buffer.from(part.slice(i + 1), 'base64');
    if (key.length !== 32)
      throw new Error(`MASTER_KEYS_PREVIOUS key ${part.slice(0, i)} must be the base64 of 32 bytes`);
    out[part.slice(0, i)] = key;
  }
  return out;
}

/** The current master key plus the previous ones (which only open). */
export function rotatingKeyWrapper(
  masterKeyB64: string,
  masterKeyId: string,
  previous?: string,
): LocalKeyWrapper {
  const key = Buffer.from(masterKeyB64, 'base64');
  if (key.length !== 32) throw new Error('MASTER_KEY must be the base64 of 32 bytes');
  return new LocalKeyWrapper({ ...parsePreviousMasterKeys(previous), [masterKeyId]: key }, masterKeyId);
}

const kidOf = (sealed: unknown): string | null =>
  sealed && typeof sealed === 'object' && typeof (sealed as { kid?: unknown }).kid === 'string'
    ? (sealed as { kid: string }).kid
    : null;

async function reseal(keys: KeyWrapper, sealed: unknown, aad: string): Promise<unknown> {
  const plain = await open(keys, sealed, aad);
  try {
    return await seal(keys, plain, aad);
  } finally {
    plain.fill(0);
  }
}

/** Re-seals, under `currentKid`, every secret sealed under another key id (see the module note). */
export async function resealAll(
  db: ResealSource,
  keys: KeyWrapper,
  currentKid: string,
): Promise<ResealReport> {
  const report: ResealReport = {
    certificates: 0,
    cafs: 0,
    webhookSecrets: 0,
    webhookSecretsInClear: 0,
    failed: [],
  };
  const skip = new Set<string>();
  const batch = async <T extends { id: string }>(sql: string, each: (row: T) => Promise<boolean>) => {
    for (;;) {
      const rows = (await db.query(sql, [currentKid, [...skip], RESEAL_BATCH])) as T[];
      if (rows.length === 0) return;
      for (const row of rows) {
        try {
          if (!(await each(row))) skip.add(row.id); // changed meanwhile: looked at again next round
        } catch {
          report.failed.push(row.id);
          skip.add(row.id);
        }
      }
    }
  };
  await batch<{ id: string; p12_sealed: unknown; password_sealed: unknown }>(
    `SELECT id, p12_sealed, password_sealed FROM certificates
      WHERE (p12_sealed->>'kid' <> $1 OR password_sealed->>'kid' <> $1) AND NOT (id::text = ANY($2::text[]))
      ORDER BY id LIMIT $3`,
    async (r) => {
      const p12 =
        kidOf(r.p12_sealed) === currentKid
          ? r.p12_sealed
          : await reseal(keys, r.p12_sealed, certificateAad(r.id, 'p12'));
      const pw =
        kidOf(r.password_sealed) === currentKid
          ? r.password_sealed
          : await reseal(keys, r.password_sealed, certificateAad(r.id, 'password'));
      const done = (await db.query(
        `UPDATE certificates SET p12_sealed = $2, password_sealed = $3
          WHERE id = $1 AND p12_sealed = $4 AND password_sealed = $5 RETURNING id`,
        [r.id, p12, pw, r.p12_sealed, r.password_sealed],
      )) as unknown[];
      if (done.length) report.certificates += 1;
      return done.length > 0;
    },
  );
  await batch<{ id: string; rsa_private_key_sealed: unknown }>(
    `SELECT id, rsa_private_key_sealed FROM cafs
      WHERE rsa_private_key_sealed->>'kid' <> $1 AND NOT (id::text = ANY($2::text[])) ORDER BY id LIMIT $3`,
    async (r) => {
      const sealed = await reseal(keys, r.rsa_private_key_sealed, cafKeyAad(r.id));
      const done = (await db.query(
        'UPDATE cafs SET rsa_private_key_sealed = $2 WHERE id = $1 AND rsa_private_key_sealed = $3 RETURNING id',
        [r.id, sealed, r.rsa_private_key_sealed],
      )) as unknown[];
      if (done.length) report.cafs += 1;
      return done.length > 0;
    },
  );
  await batch<{ id: string; secret: string | null; secret_sealed: unknown }>(
    `SELECT id, secret, secret_sealed FROM webhook_subscriptions
      WHERE (secret IS NOT NULL OR secret_sealed->>'kid' <> $1) AND NOT (id::text = ANY($2::text[]))
      ORDER BY id LIMIT $3`,
    async (r) => {
      const aad = webhookSecretAad(r.id);
      const sealed =
        r.secret_sealed != null
          ? await reseal(keys, r.secret_sealed, aad)
          : await seal(keys, Buffer.from(r.secret ?? '', 'utf8'), aad);
      const done = (await db.query(
        `UPDATE webhook_subscriptions SET secret_sealed = $2, secret = NULL
          WHERE id = $1 AND secret IS NOT DISTINCT FROM $3 AND secret_sealed IS NOT DISTINCT FROM $4 RETURNING id`,
        [r.id, sealed, r.secret, r.secret_sealed],
      )) as unknown[];
      if (done.length) {
        if (r.secret_sealed == null) report.webhookSecretsInClear += 1;
        else report.webhookSecrets += 1;
      }
      return done.length > 0;
    },
  );
  return report;
}
