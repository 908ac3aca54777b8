import { ConfigError } from '@dte/service-runtime';
import { expect } from 'chai';

import { REAL_SII_ENDPOINTS, SiiClient, siiClientOptionsFromEnv } from '../src';

describe('sii-client configuration', () => {
  it('defaults to the real SII hosts and the documented deadlines and token TTL', () => {
    const client = new SiiClient(siiClientOptionsFromEnv({}));
    expect(client.transport.endpoints).to.deep.equal(REAL_SII_ENDPOINTS);
    expect(client.transport.endpoints.cert.baseUrl).to.equal('https://maullin.sii.cl');
    expect(client.transport.endpoints.prod.registerUrl).to.equal(
      'https://ws1.sii.cl/WSREGISTRORECLAMODTE/registroreclamodteservice',
    );
    expect([
      client.transport.timeoutMs,
      client.transport.uploadTimeoutMs,
      client.tokenTtlSeconds,
    ]).to.deep.equal([30000, 120000, 300]);
  });

  it('SII_BASE_URL points both environments at a simulator; per-environment variables win', () => {
    const opts = siiClientOptionsFromEnv({
      SII_BASE_URL: 'http://127.0.0.1:18080/',
      SII_PROD_REGISTER_URL: 'http://proxy.local/ws1',
      SII_TOKEN_TTL_SECONDS: '60',
      SII_TIMEOUT_MS: '5000',
    });
    const client = new SiiClient(opts);
    expect(client.transport.endpoints).to.deep.equal({
      cert: {
        baseUrl: 'http://127.0.0.1:18080/cert',
        registerUrl: 'http://127.0.0.1:18080/cert/WSREGISTRORECLAMODTECERT/registroreclamodteservice',
      },
      prod: { baseUrl: 'http://127.0.0.1:18080/prod', registerUrl: 'http://proxy.local/ws1' },
    });
    expect([client.tokenTtlSeconds, client.transport.timeoutMs]).to.deep.equal([60, 5000]);
  });

  it('malformed values stop the process at start-up with every problem listed', () => {
    let thrown: unknown;
    try {
      siiClientOptionsFromEnv({ SII_CERT_BASE_URL: 'ftp://x', SII_TOKEN_TTL_SECONDS: '0' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(ConfigError);
    const problems = (thrown as ConfigError).problems.join('\n');
    expect(problems).to.contain('SII_CERT_BASE_URL');
    expect(problems).to.contain('SII_TOKEN_TTL_SECONDS');
  });
});
