/**
 * Master key rotation, second step (the first: MASTER_KEY / MASTER_KEY_ID name the new key and
 * MASTER_KEYS_PREVIOUS=`old-id:base64` keeps the old one opening, in every service):
 *
 *   npm run -s reseal -w @dte/api
 *
 * re-seals under the current key every certificate, CAF key and webhook secret sealed under
 * another, and seals the webhook secrets still stored in clear. Prints a JSON report; once it
 * says nothing is left, the old key can leave MASTER_KEYS_PREVIOUS. Safe to run again (each row is
 * updated only if unchanged since it was read). Reads DATABASE_URL / DATABASE_SCHEMA.
 */
import { localKeyWrapper, resealAll } from '@dte/secrets';

import { openApiDatabase } from './db/data-source';

async function cli(): Promise<void> {
  const masterKey = process.env.MASTER_KEY;
  const kid = process.env.MASTER_KEY_ID || 'mk1';
  if (!masterKey) throw new Error('MASTER_KEY is required');
  const keys = localKeyWrapper(masterKey, kid);
  const db = await openApiDatabase({
    url: process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte',
    schema: process.env.DATABASE_SCHEMA || undefined,
    poolSize: 2,
  });
  try {
    const report = await resealAll(db, keys, kid);
    process.stdout.write(`${JSON.stringify({ current_key_id: kid, ...report })}\n`);
    if (report.failed.length > 0) process.exitCode = 1;
  } finally {
    await db.destroy();
  }
}

cli().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
