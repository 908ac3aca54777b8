import { parse, readConfig } from '@dte/service-runtime';

export interface Config {
  healthPort: number;
}

/** Every environment variable this service reads, checked at start-up. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>(
    {
      healthPort: { env: 'RCV_SYNC_HEALTH_PORT', default: 3105, parse: parse.port },
    },
    env,
  );
}
