import type { KeyWrapper } from '@dte/secrets';
import type { Logger } from '@dte/service-runtime';
import type { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';

/**
 * What the domain packages need from the process that runs them (the api builds it once, a test
 * builds it with real or local parts): the database, Redis, the master key's wrapper, a logger,
 * an optional clock and the slice `C` of the configuration the package reads. Each package names
 * its slice (e.g. `FoliosConfig`), so it states what it reads and the api's Config satisfies it.
 */
export interface DomainDeps<C extends object = object> {
  config: C;
  dataSource: DataSource;
  redis: Redis;
  keys: KeyWrapper;
  logger: Logger;
  clock?: () => Date;
}
