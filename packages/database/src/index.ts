// @dte/database: the typeorm data source, entities, migrations and the migration runner.
import 'reflect-metadata';

export * from './data-source';
export * from './migrate';
export * from './idempotency';
export * from './chunked-delete';
export * from './entities';
export { migrations } from './migrations';
export * from './pipeline-outbox';
export * from './own-status-write';
export * from './returning';
export { DTES_IDEMPOTENCY_KEY_CONSTRAINT } from './sql-error-logger';
export * from './prepared';
export * from './simple-query';
export * from './pg-errors';
export * from './infra-errors';
