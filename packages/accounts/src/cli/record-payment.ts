/**
 * Operator command: records a payment received from an organization (issue 32; there is no
 * payment provider), recorded in the audit log with the operator's name. GET /billing lists it.
 *
 *   npm run -s record-payment -w @dte/accounts -- --org <organization id | company RUT> \
 *     --amount <CLP> [--periodo YYYY-MM] [--paid-on YYYY-MM-DD] [--reference "transferencia 123"] \
 *     --operator "Ana Pérez"
 *
 * Bad input: a clear error, exit 1, nothing changed. Reads DATABASE_URL (and DATABASE_SCHEMA).
 */
import { parseArgs } from 'node:util';
import { createDataSource, runMigrations } from '@dte/database';
import { recordPayment } from '../plans';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      amount: { type: 'string' },
      periodo: { type: 'string' },
      'paid-on': { type: 'string' },
      reference: { type: 'string' },
      operator: { type: 'string' },
    },
  });
  if (!values.org || values.amount === undefined || !values.operator?.trim()) {
    throw new Error(
      'usage: record-payment --org <id|rut> --amount <CLP> [--periodo YYYY-MM] [--paid-on YYYY-MM-DD] [--reference …] --operator <name>',
    );
  }
  const db = createDataSource({
    url: process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte',
    schema: process.env.DATABASE_SCHEMA || undefined,
    poolSize: 1,
    applicationName: 'dte-record-payment',
  });
  await runMigrations(db);
  try {
    const res = await recordPayment(db, {
      organization: values.org,
      amountClp: values.amount,
      periodo: values.periodo,
      paidOn: values['paid-on'],
      reference: values.reference,
      operator: values.operator,
    });
    process.stdout.write(`${JSON.stringify(res)}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(`record-payment failed: ${(err as Error).message}`);
  process.exit(1);
});
