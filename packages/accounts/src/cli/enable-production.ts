/**
 * Operator command: enables an organization to issue in production (spec, Authentication 7,
 * onboarding_production_not_authorized), recorded in the audit log with the operator's name.
 *
 *   npm run -s enable-production -w @dte/accounts -- --org <organization id | company RUT> \
 *     --operator "Ana Pérez" [--tipos 33,34,56,61] [--reason "resolución 80 del 2026-11-01"]
 *
 * Reads DATABASE_URL (and DATABASE_SCHEMA); prints one JSON line.
 */
import { parseArgs } from 'node:util';
import { createDataSource, runMigrations } from '@dte/database';
import { enableProduction } from '../organizations';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      operator: { type: 'string' },
      tipos: { type: 'string' },
      reason: { type: 'string' },
    },
  });
  if (!values.org || !values.operator?.trim()) {
    throw new Error('usage: enable-production --org <id|rut> --operator <name> [--tipos 33,34] [--reason …]');
  }
  const tipos = values.tipos?.split(',').map((x) => Number(x.trim()));
  if (tipos?.some((t) => !Number.isInteger(t) || t <= 0))
    throw new Error('--tipos: comma-separated document types');
  const db = createDataSource({
    url: process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte',
    schema: process.env.DATABASE_SCHEMA || undefined,
    poolSize: 1,
    applicationName: 'dte-enable-production',
  });
  await runMigrations(db);
  try {
    const res = await enableProduction(db, {
      organization: values.org,
      operator: values.operator.trim(),
      tipos,
      reason: values.reason,
    });
    process.stdout.write(`${JSON.stringify(res)}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(`enable-production failed: ${(err as Error).message}`);
  process.exit(1);
});
