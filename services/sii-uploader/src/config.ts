import { parse, readConfig } from '@dte/service-runtime';

export interface Config {
  healthPort: number;
}

/** Every environment variable this service reads, checked at start-up. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>(
    {
      healthPort: { env: 'SII_UPLOADER_HEALTH_PORT', default: 3102, parse: parse.port },
    },
    env,
  );
}
