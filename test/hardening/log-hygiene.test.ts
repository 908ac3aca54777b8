import { Writable } from 'node:stream';

import { LOG_REDACT_PATHS } from '@dte/service-runtime';
import { expect } from 'chai';
import pino from 'pino';

import { migratedDatabase, type MigratedDatabase } from '../support/env';

/** Runs `fn` while collecting what is written to stderr. */
async function stderrOf(fn: () => Promise<unknown>): Promise<string> {
  const chunks: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await fn().catch(() => undefined);
  } finally {
    process.stderr.write = original;
  }
  return chunks.join('');
}

describe('error logs carry no SQL parameters or personal data', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  const PERSON = 'Juana Pérez Soto';
  const RUT = '12345678-5';

  before(async () => {
    db = await migratedDatabase('loghyg');
  });
  after(async () => db?.cleanup());

  it("typeorm's failed-query log names the SQL, code and constraint, never the parameters", async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    await db.dataSource.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, PERSON]);
    const out = await stderrOf(() =>
      db.dataSource.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, `${PERSON} ${RUT}`]),
    );
    expect(out).to.contain('query failed');
    expect(out).to.contain('"code":"23505"');
    expect(out).to.contain('organizations_pkey');
    expect(out).to.not.contain(PERSON);
    expect(out).to.not.contain(RUT);
    expect(out).to.not.contain('PARAMETERS');
  });

  it("the services' logger redacts the parameters and driver fields of a logged QueryFailedError", async () => {
    const err = await db.dataSource
      .query('SELECT $1::uuid AS id, $2::text AS who', ['not-a-uuid', `${PERSON} ${RUT}`])
      .catch((e: unknown) => e as Error);
    expect((err as { parameters?: unknown }).parameters).to.be.an('array'); // what would leak
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = pino({ redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, sink);
    logger.error({ err, requestId: 'r1' }, 'internal_error');
    const out = lines.join('');
    expect(out).to.contain('[redacted]');
    expect(out).to.not.contain(PERSON);
    expect(out).to.not.contain(RUT);
  });
});
