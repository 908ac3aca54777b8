import { createLogger, type Logger } from '@dte/service-runtime';
import { SiiClient, siiClientOptionsFromEnv } from '@dte/sii-client';
import { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import type { Config } from './config';
import type { ApiDeps } from './context';
import { localKeyWrapper } from '@dte/secrets';
import { SqlCafDocumentsProbe, SiiFolioGrantClient } from '@dte/folios';

/** The production wiring of ApiDeps from configuration and an initialized DataSource. */
export function productionDeps(
  config: Config,
  dataSource: DataSource,
  logger: Logger = createLogger('api'),
): ApiDeps {
  return {
    config,
    dataSource,
    redis: new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }),
    // MASTER_KEYS_PREVIOUS: the keys of before a rotation still open old rows
    keys: localKeyWrapper(config.masterKey, config.masterKeyId),
    // the same endpoint resolution as the workers: SII_BASE_URL names the simulator, unset is the real SII
    folioGrant: new SiiFolioGrantClient({ client: new SiiClient(siiClientOptionsFromEnv()) }),
    cafDocuments: new SqlCafDocumentsProbe(dataSource),
    logger,
  };
}
