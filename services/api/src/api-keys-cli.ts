/**
 * API key management from the command line (there is no HTTP endpoint for keys):
 *
 *   npm run -s api-key -w @dte/api -- create --company <company_id> --env cert|prod [--name n] [--scopes a,b] [--expires-days N]
 *   npm run -s api-key -w @dte/api -- list --org <organization_id>
 *   npm run -s api-key -w @dte/api -- revoke <api_key_id | prefix sk_cert_xxxxxxxx>
 *
 * Reads DATABASE_URL / DATABASE_SCHEMA. `create` prints the key once, as JSON.
 */
import { parseArgs } from 'node:util';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys';
import { isScope, type Scope } from '@dte/tenancy';
import { openApiDatabase } from './db/data-source';

async function cli(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      company: { type: 'string' },
      org: { type: 'string' },
      env: { type: 'string' },
      name: { type: 'string', default: 'cli' },
      scopes: { type: 'string' },
      'expires-days': { type: 'string' },
    },
  });
  const [command, target] = positionals;
  const db = await openApiDatabase({
    url: process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte',
    schema: process.env.DATABASE_SCHEMA || undefined,
    poolSize: 2,
  });
  try {
    if (command === 'create') {
      if (!values.company || (values.env !== 'cert' && values.env !== 'prod')) {
        throw new Error('create needs --company <id> and --env cert|prod');
      }
      const scopes = values.scopes?.split(',').map((s) => s.trim());
      if (scopes?.some((s) => !isScope(s))) throw new Error(`unknown scope in ${values.scopes}`);
      const days = values['expires-days'];
      const out = await createApiKey(db, {
        companyId: values.company,
        environment: values.env,
        name: values.name!,
        scopes: scopes as Scope[] | undefined,
        expiresAt: days ? new Date(Date.now() + Number(days) * 86_400_000) : null,
      });
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else if (command === 'list') {
      if (!values.org) throw new Error('list needs --org <organization_id>');
      process.stdout.write(`${JSON.stringify(await listApiKeys(db, values.org))}\n`);
    } else if (command === 'revoke') {
      if (!target) throw new Error('revoke needs an api key id or prefix');
      const n = await revokeApiKey(db, target);
      if (n === 0) throw new Error(`no active key ${target}`);
      process.stdout.write(`${JSON.stringify({ revoked: n })}\n`);
    } else {
      throw new Error('usage: api-key create|list|revoke …');
    }
  } finally {
    await db.destroy();
  }
}

cli().catch((err) => {
  console.error(`api-key: ${(err as Error).message}`);
  process.exit(1);
});
