import os from 'node:os';
import { expect } from 'chai';
import { isServiceError } from '@dte/error-catalog';
import { checkWebhookUrl, parseWebhookUrl, type Resolver, type UrlPolicy } from '../src/url-policy';
import { readTestMode } from '../src/test-mode';
import { systemResolver } from '../src/url-policy';

const PROD: UrlPolicy = { allowLoopback: false };
const TEST: UrlPolicy = { allowLoopback: true };
const fixed =
  (map: Record<string, string[]>): Resolver =>
  async (host) => {
    const list = map[host];
    if (!list) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

async function reason(url: string, policy: UrlPolicy, resolver?: Resolver): Promise<string> {
  try {
    await checkWebhookUrl(url, policy, resolver);
  } catch (err) {
    if (!isServiceError(err)) throw err;
    expect(err.code).to.equal('invalid_webhook_url');
    return String(err.detail?.reason);
  }
  return 'accepted';
}

describe('webhook URL rules', () => {
  const resolver = fixed({ 'hooks.example.com': ['93.184.216.34'], 'v6.example.com': ['2606:4700::1111'] });

  it('accepts public https on the default port', async () => {
    expect(await reason('https://hooks.example.com/dte?x=1', PROD, resolver)).to.equal('accepted');
    expect(await reason('https://hooks.example.com:443/dte', PROD, resolver)).to.equal('accepted');
    expect(await reason('https://v6.example.com/dte', PROD, resolver)).to.equal('accepted');
    expect(await reason('https://93.184.216.34/dte', PROD)).to.equal('accepted');
    const { target } = await checkWebhookUrl('https://hooks.example.com/', PROD, resolver);
    expect(target).to.deep.equal({ address: '93.184.216.34', family: 4 });
  });

  const refused: [string, string][] = [
    ['http://hooks.example.com/', 'not_https'],
    ['ftp://hooks.example.com/', 'not_https'],
    ['not a url', 'not_a_url'],
    ['https://hooks.example.com:8443/', 'custom_port'],
    ['https://user:pw@hooks.example.com/', 'credentials'],
    ['https://localhost/', 'loopback'],
    ['https://api.localhost/', 'loopback'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://10.1.2.3/', 'private'],
    ['https://172.16.5.4/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['https://[fc00::1]/', 'private'],
    ['https://[fd12:3456::1]/', 'private'],
    ['https://100.64.0.1/', 'cgnat'],
    ['https://100.127.255.254/', 'cgnat'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://[fd00:ec2::254]/', 'metadata'],
    ['https://[::ffff:169.254.169.254]/', 'metadata'],
    ['https://169.254.10.10/', 'link_local'],
    ['https://[fe80::1]/', 'link_local'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://[::]/', 'unspecified'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://[2001:db8::1]/', 'reserved'],
    ['https://[64:ff9b::a00:1]/', 'private'],
    ['https://[2002:c0a8:101::1]/', 'private'],
  ];
  for (const [url, why] of refused) {
    it(`refuses ${url} (${why})`, async () => {
      expect(await reason(url, PROD, resolver)).to.equal(why);
    });
  }

  it('refuses a host name that resolves to a refused address, by the addresses it resolves to now', async () => {
    const r = fixed({
      'rebind.example.com': ['127.0.0.1'],
      'meta.example.com': ['169.254.169.254'],
      'mixed.example.com': ['93.184.216.34', '10.0.0.8'],
      'v6meta.example.com': ['fd00:ec2::254'],
    });
    expect(await reason('https://rebind.example.com/', PROD, r)).to.equal('loopback');
    expect(await reason('https://meta.example.com/', PROD, r)).to.equal('metadata');
    expect(await reason('https://mixed.example.com/', PROD, r)).to.equal('private');
    expect(await reason('https://v6meta.example.com/', PROD, r)).to.equal('metadata');
    expect(await reason('https://nowhere.example.com/', PROD, r)).to.equal('unresolvable');
  });

  it("refuses this machine's own host name, which the system resolver maps to loopback", async function () {
    const host = os.hostname();
    const addrs = await systemResolver(host).catch(() => []);
    if (!addrs.some((a) => a.address.startsWith('127.'))) this.skip();
    expect(await reason(`https://${host}/hook`, PROD)).to.equal('loopback');
  });

  it('with the test-only setting, allows loopback on any port and still refuses everything else', async () => {
    expect(await reason('https://127.0.0.1:8443/', TEST)).to.equal('accepted');
    expect(await reason('https://localhost:8443/', TEST)).to.equal('accepted');
    expect(await reason('https://[::1]:9000/', TEST)).to.equal('accepted');
    expect(await reason('https://10.0.0.1/', TEST)).to.equal('private');
    expect(await reason('https://169.254.169.254/', TEST)).to.equal('metadata');
    expect(await reason('https://100.64.1.1/', TEST)).to.equal('cgnat');
    expect(await reason('https://hooks.example.com:8443/', TEST, resolver)).to.equal('custom_port');
    expect(await reason('http://127.0.0.1:8443/', TEST)).to.equal('not_https');
  });

  it('parses the port and host of an accepted URL', () => {
    const p = parseWebhookUrl('https://[::1]:9443/a?b=c', TEST);
    expect(p).to.include({ hostname: '::1', port: 9443, customPort: true });
  });
});

describe('test-only settings never reach production', () => {
  it('refuses the loopback receiver or the test CA unless NODE_ENV=test', () => {
    for (const NODE_ENV of ['production', undefined, 'development', '']) {
      expect(() => readTestMode({ NODE_ENV, WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true' })).to.throw(
        /test-only/,
      );
      expect(() => readTestMode({ NODE_ENV, WEBHOOKS_TEST_CA_FILE: '/etc/hostname' })).to.throw(/test-only/);
    }
    expect(readTestMode({ NODE_ENV: 'production' }).policy.allowLoopback).to.equal(false);
    expect(
      readTestMode({ NODE_ENV: 'production', WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'false' }).policy,
    ).to.deep.equal({
      allowLoopback: false,
    });
    expect(
      readTestMode({ NODE_ENV: 'test', WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true' }).policy.allowLoopback,
    ).to.equal(true);
    expect(() => readTestMode({ NODE_ENV: 'test', WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'maybe' })).to.throw(
      /true or false/,
    );
  });
});
