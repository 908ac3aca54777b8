/**
 * Running migrations explicitly: the target schema is created when missing, then every pending
 * migration runs in its own transaction, in timestamp order.
 */
import type { DataSource } from 'typeorm';
import { assertSchemaName } from './data-source';

async function ensureSchema(ds: DataSource): Promise<void> {
  const schema = (ds.options as { schema?: string }).schema;
  if (!schema) return;
  assertSchemaName(schema);
  await ds.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
}

/** Applies pending migrations; returns the names of those applied now (empty when up to date). */
export async function runMigrations(ds: DataSource): Promise<string[]> {
  if (!ds.isInitialized) await ds.initialize();
  await ensureSchema(ds);
  const applied = await ds.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}

/** Reverts the most recent migration; returns whether one was reverted. */
export async function revertLastMigration(ds: DataSource): Promise<boolean> {
  if (!ds.isInitialized) await ds.initialize();
  const before = await ds.query(`SELECT count(*)::int AS n FROM migrations`);
  await ds.undoLastMigration({ transaction: 'each' });
  const after = await ds.query(`SELECT count(*)::int AS n FROM migrations`);
  return after[0].n < before[0].n;
}

/** Whether migrations are pending. */
export async function hasPendingMigrations(ds: DataSource): Promise<boolean> {
  if (!ds.isInitialized) await ds.initialize();
  await ensureSchema(ds);
  return ds.showMigrations();
}
