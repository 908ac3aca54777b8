/**
 * The agent's side of the OAuth flow for the tests: an in-memory OAuthClientProvider of the MCP
 * SDK, the loopback redirect endpoint, and the user approving the consent page in Chromium.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';

export type CallbackServer = Awaited<ReturnType<typeof callbackServer>>;

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The agent's side of OAuth, in memory: what a real MCP client keeps in its keychain. */
export class AgentOAuth implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  constructor(
    readonly redirectUrl: string,
    private readonly scope: string,
  ) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Agente de prueba',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: this.scope,
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(i: OAuthClientInformationMixed) {
    this.info = i;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier!;
  }
}

/** The agent's loopback redirect endpoint: collects what the authorization server sends back. */
export async function callbackServer() {
  const hits: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    if (u.pathname === '/callback') hits.push(u.searchParams); // not the browser's /favicon.ico
    res.end('listo');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/callback`, hits, close: () => server.close() };
}

export async function consentInBrowser(
  browser: Browser,
  at: { origin: string; cookie: string; cb: CallbackServer },
  url: URL,
  opts: { expectScopes?: string[]; grant?: string[] } = {},
): Promise<string> {
  const { origin, cookie, cb } = at;
  const context = await browser.newContext();
  await context.addCookies([{ name: 'dte_session', value: cookie, url: origin }]);
  const page = await context.newPage();
  try {
    const before = cb.hits.length;
    await page.goto(url.href);
    await page.waitForSelector('#approve');
    expect(await page.textContent('h1')).to.contain('Agente de prueba');
    const scopes = await page.$$eval('li[data-scope]', (els) => els.map((e) => e.getAttribute('data-scope')));
    if (opts.expectScopes) expect(scopes).to.deep.equal(opts.expectScopes);
    if (scopes.includes('dte:write'))
      expect(await page.textContent('ul.scopes')).to.contain('Emitir facturas');
    if (opts.grant) {
      for (const s of scopes) {
        if (!opts.grant.includes(s!)) await page.uncheck(`li[data-scope="${s}"] input`);
      }
    }
    await page.selectOption('#environment', 'cert');
    await Promise.all([
      page.waitForURL(`${cb.url}**`, { timeout: 15_000 }).catch(async (e) => {
        throw new Error(`${(e as Error).message}\n${await page.content()}`);
      }),
      page.click('#approve'),
    ]);
    expect(cb.hits.length).to.equal(before + 1);
    const hit = cb.hits[cb.hits.length - 1];
    expect(hit.get('error'), hit.toString()).to.equal(null);
    return hit.get('code')!;
  } finally {
    await context.close();
  }
}
