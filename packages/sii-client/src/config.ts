/**
 * The SII client's environment variables, for services to read with `readConfig` next to their
 * own (`readConfig({ ...ownSpec, ...siiClientEnvSpec })`), then `siiClientOptions(config)`.
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `SII_BASE_URL` | root URL of a SII simulator serving both environments (see `simulatorEndpoints`) | unset: the real SII |
 * | `SII_CERT_BASE_URL`, `SII_PROD_BASE_URL` | host (+ base path) of DTEWS and DTEUpload per environment; win over `SII_BASE_URL` | maullin / palena |
 * | `SII_CERT_REGISTER_URL`, `SII_PROD_REGISTER_URL` | full URL of the register WS per environment | ws2 / ws1 |
 * | `SII_TIMEOUT_MS` | deadline of a SOAP call | 30000 |
 * | `SII_UPLOAD_TIMEOUT_MS` | deadline of a DTEUpload POST | 120000 |
 * | `SII_TOKEN_TTL_SECONDS` | how long a token is reused | 300 |
 * | `SII_USER_AGENT` | User-Agent of every request | `Mozilla/4.0 (compatible; PROG 1.0; …)` |
 */
import { parse, readConfig, type EnvSpec } from '@dte/service-runtime';

import { DEFAULT_TOKEN_TTL_SECONDS } from './auth';
import type { SiiClientOptions } from './client';
import {
  resolveEndpoints,
  simulatorEndpoints,
  type SiiEndpointOverrides,
  type SiiEndpoints,
} from './endpoints';
import { DEFAULT_TIMEOUT_MS, DEFAULT_UPLOAD_TIMEOUT_MS, DEFAULT_USER_AGENT } from './transport';

export interface SiiClientConfig {
  siiBaseUrl?: string;
  siiCertBaseUrl?: string;
  siiProdBaseUrl?: string;
  siiCertRegisterUrl?: string;
  siiProdRegisterUrl?: string;
  siiTimeoutMs: number;
  siiUploadTimeoutMs: number;
  siiTokenTtlSeconds: number;
  siiUserAgent: string;
}

function httpUrl(raw: string): string {
  const u = new URL(raw);
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`expected an http(s) URL, got "${raw}"`);
  return raw;
}

export const siiClientEnvSpec: EnvSpec<SiiClientConfig> = {
  siiBaseUrl: { env: 'SII_BASE_URL', required: false, parse: httpUrl },
  siiCertBaseUrl: { env: 'SII_CERT_BASE_URL', required: false, parse: httpUrl },
  siiProdBaseUrl: { env: 'SII_PROD_BASE_URL', required: false, parse: httpUrl },
  siiCertRegisterUrl: { env: 'SII_CERT_REGISTER_URL', required: false, parse: httpUrl },
  siiProdRegisterUrl: { env: 'SII_PROD_REGISTER_URL', required: false, parse: httpUrl },
  siiTimeoutMs: { env: 'SII_TIMEOUT_MS', default: DEFAULT_TIMEOUT_MS, parse: parse.positiveInt },
  siiUploadTimeoutMs: {
    env: 'SII_UPLOAD_TIMEOUT_MS',
    default: DEFAULT_UPLOAD_TIMEOUT_MS,
    parse: parse.positiveInt,
  },
  siiTokenTtlSeconds: {
    env: 'SII_TOKEN_TTL_SECONDS',
    default: DEFAULT_TOKEN_TTL_SECONDS,
    parse: parse.positiveInt,
  },
  siiUserAgent: { env: 'SII_USER_AGENT', default: DEFAULT_USER_AGENT },
};

/** Endpoints from the configuration: the real SII, a simulator root, then per-variable overrides. */
export function endpointsFromConfig(c: SiiClientConfig): SiiEndpoints {
  const base = c.siiBaseUrl ? simulatorEndpoints(c.siiBaseUrl) : resolveEndpoints();
  const overrides: SiiEndpointOverrides = {
    cert: {
      ...base.cert,
      ...(c.siiCertBaseUrl ? { baseUrl: c.siiCertBaseUrl } : {}),
      ...(c.siiCertRegisterUrl ? { registerUrl: c.siiCertRegisterUrl } : {}),
    },
    prod: {
      ...base.prod,
      ...(c.siiProdBaseUrl ? { baseUrl: c.siiProdBaseUrl } : {}),
      ...(c.siiProdRegisterUrl ? { registerUrl: c.siiProdRegisterUrl } : {}),
    },
  };
  return resolveEndpoints(overrides);
}

/** SiiClient options from the configuration (the token cache is the caller's to add). */
export function siiClientOptions(c: SiiClientConfig): SiiClientOptions {
  return {
    endpoints: endpointsFromConfig(c),
    timeoutMs: c.siiTimeoutMs,
    uploadTimeoutMs: c.siiUploadTimeoutMs,
    tokenTtlSeconds: c.siiTokenTtlSeconds,
    userAgent: c.siiUserAgent,
  };
}

/** readConfig(siiClientEnvSpec) + siiClientOptions, for callers that read nothing else. */
export function siiClientOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): SiiClientOptions {
  return siiClientOptions(readConfig(siiClientEnvSpec, env));
}

/** The SII's address as the api and the domain packages it runs read it (SII_BASE_URL, SII_TIMEOUT_MS). */
export interface SiiAddressConfig {
  /**
   * The SII simulator's root when set (it then stands in for the SII and serves exchange rates);
   * unset means the real SII (see @dte/sii-client's endpoint configuration, read the same way).
   */
  siiBaseUrl?: string;
  /** a call to the SII gives up after this many ms */
  siiTimeoutMs: number;
}
