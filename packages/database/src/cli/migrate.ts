/**
 * `npm run migrate -w @dte/database [-- --revert | --check]`
 * Applies pending migrations to DATABASE_URL (inside DATABASE_SCHEMA when set); `--revert` undoes
 * the last one; `--check` exits 1 when migrations are pending.
 */
import { createDataSource, databaseOptionsFromEnv } from '../data-source';
import { hasPendingMigrations, revertLastMigration, runMigrations } from '../migrate';

async function main(argv: string[]): Promise<number> {
  const options = databaseOptionsFromEnv();
  const ds = createDataSource({ ...options, applicationName: 'dte-migrate' });
  const where = `${new URL(options.url).host}${new URL(options.url).pathname}${options.schema ? ` schema ${options.schema}` : ''}`;
  try {
    if (argv.includes('--revert')) {
      const reverted = await revertLastMigration(ds);
      console.log(reverted ? `reverted the last migration on ${where}` : `nothing to revert on ${where}`);
    } else if (argv.includes('--check')) {
      const pending = await hasPendingMigrations(ds);
      console.log(pending ? `migrations are pending on ${where}` : `up to date: ${where}`);
      return pending ? 1 : 0;
    } else {
      const applied = await runMigrations(ds);
      if (applied.length === 0) console.log(`up to date: ${where}`);
      for (const name of applied) console.log(`applied ${name} on ${where}`);
    }
    return 0;
  } finally {
    if (ds.isInitialized) await ds.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`migrate failed: ${err.message}`);
    process.exit(1);
  },
);
