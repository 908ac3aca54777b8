/**
 * The environment every SII worker (sii-uploader, sii-poller) reads next to `siiClientEnvSpec`,
 * its health port and its own settings: the database holding the work, the Redis that shares the
 * SII tokens (RedisTokenCache) and the master key that opens the stored certificates; and the
 * SiiClient such a worker builds from it (`siiWorkerClient`).
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `DATABASE_URL`, `DATABASE_SCHEMA` | PostgreSQL (and schema) | local stack / unset |
 * | `REDIS_URL` | Redis of the token cache | local stack |
 * | `MASTER_KEY`, `MASTER_KEY_ID` | key that unwraps the sealed certificates | required / `mk1` |
 * | `SII_TOKEN_CACHE_PREFIX` | prefix of the SII token keys in Redis | `sii:token` |
 */
import type { EnvSpec } from '@dte/service-runtime';
import type { Redis } from 'ioredis';

import { SiiClient } from './client';
import { siiClientOptions, type SiiClientConfig } from './config';
import { RedisTokenCache } from './redis-token-cache';

export interface SiiWorkerConfig {
  databaseUrl: string;
  databaseSchema?: string;
  redisUrl: string;
  masterKey: string;
  masterKeyId: string;
  /** prefix of the SII token keys in Redis */
  tokenCachePrefix: string;
}

export const siiWorkerEnvSpec: EnvSpec<SiiWorkerConfig> = {
  databaseUrl: { env: 'DATABASE_URL', default: 'postgres://dte:dte@127.0.0.1:15432/dte' },
  databaseSchema: { env: 'DATABASE_SCHEMA', required: false },
  redisUrl: { env: 'REDIS_URL', default: 'redis://127.0.0.1:16379' },
  masterKey: { env: 'MASTER_KEY' },
  masterKeyId: { env: 'MASTER_KEY_ID', default: 'mk1' },
  tokenCachePrefix: { env: 'SII_TOKEN_CACHE_PREFIX', default: 'sii:token' },
};

/** A worker's SiiClient: its configuration, with the tokens shared in Redis under tokenCachePrefix. */
export function siiWorkerClient(config: SiiClientConfig & SiiWorkerConfig, redis: Redis): SiiClient {
  return new SiiClient({
    ...siiClientOptions(config),
    tokenCache: new RedisTokenCache(redis),
    tokenCacheKeyPrefix: config.tokenCachePrefix,
  });
}
