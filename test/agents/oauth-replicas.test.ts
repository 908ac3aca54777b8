/**
 * Issue 15: the OAuth server keeps its artifacts in Redis, so two api replicas behind one address
 * share clients, grants and tokens (a token issued through one is accepted by the other, and a
 * refresh through the second works); access tokens are short-lived: once expired the MCP server
 * answers 401 invalid_token and the refresh token gets a new one.
 */
import { expect } from 'chai';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  discoverAuthorizationServerMetadata,
  refreshAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { chromium, type Browser } from 'playwright-core';
import { startApi, type RunningApi } from '../../services/api/src/app';
import { newRut, startTestApi, type TestApi } from '../../services/api/test/support/test-api';
import { freePort } from '../support/pipeline-harness';
import {
  AgentOAuth,
  CHROMIUM_ARGS,
  callbackServer,
  consentInBrowser,
  type CallbackServer,
} from './oauth-agent';

const TTL_SEC = 2;
const KID = `test-${randomUUID()}`;

describe('OAuth server across api replicas, with short-lived access tokens (issue 15)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let replica: RunningApi;
  let browser: Browser;
  let cb: CallbackServer;
  let origin: string;
  let cookie: string;

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    // the signing keys every replica shares (OAUTH_JWKS_FILE), as a deployment mounts them
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' };
    const jwksFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-jwks-')), 'jwks.json');
    fs.writeFileSync(jwksFile, JSON.stringify({ keys: [jwk] }), { mode: 0o600 });
    t = await startTestApi({
      port,
      env: {
        PUBLIC_BASE_URL: `${origin}/api/v1`,
        OAUTH_ACCESS_TOKEN_TTL_SEC: String(TTL_SEC),
        OAUTH_JWKS_FILE: jwksFile,
      },
    });
    // the second replica: its own app and OAuth provider, the same configuration, database and Redis
    replica = await startApi({ ...t.deps }, { port: 0 });
    const s = await t.seed({ rut: newRut(), ownerEmail: `owner-${randomUUID()}@example.cl` });
    cookie = await t.sessionCookie(s.user_id!, s.organization_id);
    cb = await callbackServer();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    cb?.close();
    await replica?.close();
    await t?.close();
  });

  it('both replicas publish the configured signing key (OAUTH_JWKS_FILE), public part only', async () => {
    for (const base of [origin, `http://127.0.0.1:${replica.port}`]) {
      const res = await fetch(`${base}/oauth/jwks`);
      expect(res.status, base).to.equal(200);
      const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
      expect(
        keys.map((k) => k.kid),
        base,
      ).to.deep.equal([KID]);
      expect(keys[0], base).to.not.have.any.keys('d', 'p', 'q', 'dp', 'dq', 'qi');
    }
  });

  it('a token issued through one replica works on the other; once expired it is refused and the refresh token renews it', async () => {
    const replicaMcp = new URL(`http://127.0.0.1:${replica.port}/mcp`);
    const a = new AgentOAuth(cb.url, 'dte:read');
    const first = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: a });
    await new Client({ name: 'a', version: '1' }).connect(first).catch(() => undefined);
    await first.finishAuth(
      await consentInBrowser(browser, { origin, cookie, cb }, a.authorizationUrl!, { grant: ['dte:read'] }),
    );
    expect(a.saved?.expires_in).to.equal(TTL_SEC);

    const list = (token: string) =>
      fetch(replicaMcp, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await list(a.saved!.access_token)).status).to.equal(200);

    // wait past the token's own expiry (the lifetime under test, not a performance figure)
    await new Promise((r) => setTimeout(r, (TTL_SEC + 1) * 1000));
    const expired = await list(a.saved!.access_token);
    expect(expired.status).to.equal(401);
    expect(expired.headers.get('www-authenticate')).to.contain('error="invalid_token"');

    // refresh through the OTHER replica's token endpoint (same issuer, shared storage)
    const metadata = await discoverAuthorizationServerMetadata(origin);
    const renewed = await refreshAuthorization(origin, {
      metadata: { ...metadata!, token_endpoint: `http://127.0.0.1:${replica.port}/oauth/token` },
      clientInformation: a.info!,
      refreshToken: a.saved!.refresh_token!,
      resource: new URL(`${origin}/mcp`),
    });
    expect((await list(renewed.access_token)).status).to.equal(200);
  });
});
