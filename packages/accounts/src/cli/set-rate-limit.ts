/**
 * Operator command: sets an organization's own API request limit (requests per API key and per
 * dashboard user in each RATE_LIMIT_WINDOW_SEC window, 60 s by default), or back to the api's
 * default (RATE_LIMIT_MAX, 20 000) with --default. Audited with the operator's name.
 *
 *   npm run -s set-rate-limit -w @dte/accounts -- --org <organization id | company RUT> \
 *     --operator "Ana Pérez" (--max 30000 | --default)
 *
 * Reads DATABASE_URL (and DATABASE_SCHEMA); prints one JSON line.
 */
import { parseArgs } from 'node:util';
import { createDataSource, runMigrations } from '@dte/database';
import { setOrganizationRateLimit } from '../rate-limit-setting';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      operator: { type: 'string' },
      max: { type: 'string' },
      default: { type: 'boolean' },
    },
  });
  if (!values.org || !values.operator?.trim() || (values.max === undefined) === !values.default) {
    throw new Error('usage: set-rate-limit --org <id|rut> --operator <name> (--max <n> | --default)');
  }
  const max = values.default ? null : Number(values.max);
  const db = createDataSource({
    url: process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte',
    schema: process.env.DATABASE_SCHEMA || undefined,
    poolSize: 1,
    applicationName: 'dte-set-rate-limit',
  });
  await runMigrations(db);
  try {
    const res = await setOrganizationRateLimit(db, {
      organization: values.org,
      operator: values.operator.trim(),
      max,
    });
    process.stdout.write(`${JSON.stringify(res)}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(`set-rate-limit failed: ${(err as Error).message}`);
  process.exit(1);
});
