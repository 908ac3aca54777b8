import { parse, readConfig } from '@dte/service-runtime';

export interface Config {
  port: number;
}

/** Every environment variable the api reads, checked at start-up. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return readConfig<Config>({ port: { env: 'API_PORT', default: 3000, parse: parse.port } }, env);
}
