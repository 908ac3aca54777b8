/**
 * Where each SII environment lives. Two addresses per environment:
 * - `baseUrl`: the host of the DTEWS SOAP services (CrSeed, GetTokenFromSeed, QueryEstUp,
 *   QueryEstDte) and of the DTEUpload form; the client appends the SII's own paths
 *   (`/DTEWS/CrSeed.jws`, `/cgi_dte/UPL/DTEUpload`, ...). It may carry a base path, so a stand-in
 *   that serves an environment under a prefix is configuration only.
 * - `registerUrl`: the complete URL of the acceptance/claim register WS (ws2 for certification,
 *   ws1 for production).
 *
 * The RPC namespaces of the SOAP calls always name the real SII endpoint of the environment (as
 * the WSDLs and the authentication manual do), whatever host the call goes to.
 */
export type SiiEnvironment = 'cert' | 'prod';
export const SII_ENVIRONMENTS: readonly SiiEnvironment[] = ['cert', 'prod'];

export interface SiiEnvironmentEndpoints {
  baseUrl: string;
  registerUrl: string;
}

export type SiiEndpoints = Record<SiiEnvironment, SiiEnvironmentEndpoints>;

/** The real SII (PROTOCOL.md §1). */
export const REAL_SII_ENDPOINTS: SiiEndpoints = {
  cert: {
    baseUrl: 'https://maullin.sii.cl',
    registerUrl: 'https://ws2.sii.cl/WSREGISTRORECLAMODTECERT/registroreclamodteservice',
  },
  prod: {
    baseUrl: 'https://palena.sii.cl',
    registerUrl: 'https://ws1.sii.cl/WSREGISTRORECLAMODTE/registroreclamodteservice',
  },
};

/** The SII's paths under `baseUrl`. */
export const SII_PATHS = {
  crSeed: '/DTEWS/CrSeed.jws',
  getTokenFromSeed: '/DTEWS/GetTokenFromSeed.jws',
  queryEstUp: '/DTEWS/QueryEstUp.jws',
  queryEstDte: '/DTEWS/QueryEstDte.jws',
  dteUpload: '/cgi_dte/UPL/DTEUpload',
} as const;

export type SiiPath = keyof typeof SII_PATHS;

/** The RPC namespace of a DTEWS service: its real endpoint URL in that environment. */
export function rpcNamespace(env: SiiEnvironment, path: SiiPath): string {
  return REAL_SII_ENDPOINTS[env].baseUrl + SII_PATHS[path];
}

/** `baseUrl` + one of the SII's paths, keeping any base path of `baseUrl`. */
export function serviceUrl(endpoints: SiiEnvironmentEndpoints, path: SiiPath): string {
  return endpoints.baseUrl.replace(/\/+$/, '') + SII_PATHS[path];
}

export type SiiEndpointOverrides = Partial<Record<SiiEnvironment, Partial<SiiEnvironmentEndpoints>>>;

/** The real endpoints with the given overrides applied; every URL is checked. */
export function resolveEndpoints(overrides: SiiEndpointOverrides = {}): SiiEndpoints {
  const out = {} as SiiEndpoints;
  for (const env of SII_ENVIRONMENTS) {
    const merged = { ...REAL_SII_ENDPOINTS[env], ...definedOnly(overrides[env] ?? {}) };
    checkHttpUrl(`${env}.baseUrl`, merged.baseUrl);
    checkHttpUrl(`${env}.registerUrl`, merged.registerUrl);
    out[env] = merged;
  }
  return out;
}

/**
 * Endpoints of a SII simulator serving both environments from one root URL: certification
 * under `<root>/cert` and production under `<root>/prod`, each with the SII's own paths below
 * (DTEWS, cgi_dte and the register paths of ws2 and ws1).
 */
export function simulatorEndpoints(rootUrl: string): SiiEndpoints {
  const root = rootUrl.replace(/\/+$/, '');
  return resolveEndpoints({
    cert: {
      baseUrl: `${root}/cert`,
      registerUrl: `${root}/cert/WSREGISTRORECLAMODTECERT/registroreclamodteservice`,
    },
    prod: {
      baseUrl: `${root}/prod`,
      registerUrl: `${root}/prod/WSREGISTRORECLAMODTE/registroreclamodteservice`,
    },
  });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as Partial<T>;
}

function checkHttpUrl(name: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RangeError(`SII endpoint ${name} is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RangeError(`SII endpoint ${name} must be http(s): ${value}`);
  if (url.search || url.hash)
    throw new RangeError(`SII endpoint ${name} must carry no query or fragment: ${value}`);
}
