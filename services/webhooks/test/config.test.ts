import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError } from '@dte/service-runtime';
import { loadConfig } from '../src/config';

const MAIN = path.resolve(__dirname, '../src/main.ts');
const KEY = Buffer.alloc(32, 7).toString('base64');

describe('webhooks configuration', () => {
  it('defaults to the spec: 1m/30m/2h/12h, 10 s, 90 days, three exhausted deliveries', () => {
    const c = loadConfig({ SMTP_URL: 'smtp://127.0.0.1:25', MASTER_KEY: KEY });
    expect(c.retryDelaysMs).to.deep.equal([60_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(c.timeoutMs).to.equal(10_000);
    expect(c.retentionMs).to.equal(90 * 86_400_000);
    expect(c.disableAfter).to.equal(3);
    expect(c.testMode.policy.allowLoopback).to.equal(false);
    expect(c.testMode.ca).to.equal(undefined);
  });

  it('takes compressed delays and refuses a schedule that is not four delays', () => {
    const c = loadConfig({
      SMTP_URL: 'smtp://x:25',
      MASTER_KEY: KEY,
      WEBHOOKS_RETRY_DELAYS: '100ms,1s,2s,3s',
      WEBHOOKS_TIMEOUT: '500ms',
    });
    expect(c.retryDelaysMs).to.deep.equal([100, 1000, 2000, 3000]);
    expect(c.timeoutMs).to.equal(500);
    expect(() =>
      loadConfig({ SMTP_URL: 'smtp://x:25', MASTER_KEY: KEY, WEBHOOKS_RETRY_DELAYS: '1m,2m' }),
    ).to.throw(ConfigError, /4 delays/);
    expect(() => loadConfig({})).to.throw(ConfigError, /SMTP_URL/);
  });

  it("needs MASTER_KEY (the api's) to open the sealed signing secrets", () => {
    expect(() => loadConfig({ SMTP_URL: 'smtp://x:25' })).to.throw(ConfigError, /MASTER_KEY/);
    expect(loadConfig({ SMTP_URL: 'smtp://x:25', MASTER_KEY: KEY })).to.include({
      masterKey: KEY,
      masterKeyId: 'mk1',
    });
  });

  it('the service refuses to start with the test-only loopback setting in production', function () {
    this.timeout(30_000);
    const run = spawnSync(process.execPath, ['--import', 'tsx', MAIN], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true',
        SMTP_URL: 'smtp://127.0.0.1:25',
        MASTER_KEY: KEY,
      },
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(run.status).to.not.equal(0);
    expect(run.stderr).to.match(/test-only/);
  });
});
