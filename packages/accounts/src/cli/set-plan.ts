/**
 * Operator command: sets an organization's plan and the monthly document allowance of one
 * environment (issue 32), recorded in the audit log with the operator's name.
 *
 *   npm run -s set-plan -w @dte/accounts -- --org <organization id | company RUT> --plan <name> \
 *     --monthly-limit <N|unlimited> [--env cert|prod] --operator "Ana Pérez"
 *
 * Unknown organization or plan, a negative or non-numeric limit: a clear error, exit 1, nothing
 * changed. Reads DATABASE_URL (and DATABASE_SCHEMA); prints one JSON line.
 */
import { parseArgs } from 'node:util';
import { createDataSource, runMigrations } from '@dte/database';
import { setPlan } from '../plans';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      plan: { type: 'string' },
      'monthly-limit': { type: 'string' },
      env: { type: 'string' },
      operator: { type: 'string' },
    },
  });
  if (!values.org || !values.plan || values['monthly-limit'] === undefined || !values.operator?.trim()) {
    throw new Error(
      'usage: set-plan --org <id|rut> --plan <name> --monthly-limit <N|unlimited> [--env cert|prod] --operator <name>',
    );
  }
  const db = createDataSource({
    url: process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte',
    schema: process.env.DATABASE_SCHEMA || undefined,
    poolSize: 1,
    applicationName: 'dte-set-plan',
  });
  await runMigrations(db);
  try {
    const res = await setPlan(db, {
      organization: values.org,
      plan: values.plan,
      monthlyLimit: values['monthly-limit'],
      env: values.env,
      operator: values.operator,
    });
    process.stdout.write(`${JSON.stringify(res)}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(`set-plan failed: ${(err as Error).message}`);
  process.exit(1);
});
