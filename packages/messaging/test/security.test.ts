// Secured Kafka and registry settings read from the environment (security.ts), with real PEM files
// made by openssl (a self-made CA, a server and a client certificate), and the registry side used
// for real: SchemaCatalog registers a schema at an HTTPS stand-in that trusts only that CA's
// chain and wants basic auth.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { DEFAULT_SCHEMA_DIR, messagingConfigFromEnv, SchemaCatalog } from '../src';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files in `dir`. */
function makePki(dir: string) {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=dte test CA',
    ],
    dir,
  );
  for (const [name, subj, ext] of [
    ['server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1'],
    ['client', '/CN=dte-service', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    openssl(
      [
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        subj,
      ],
      dir,
    );
    fs.writeFileSync(path.join(dir, `${name}.ext`), `${ext}\n`);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
      ],
      dir,
    );
  }
  const f = (n: string) => path.join(dir, n);
  return {
    ca: f('ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
  };
}

const BASE = { KAFKA_BROKERS: 'broker.example:9093', SCHEMA_REGISTRY_URL: 'https://registry.example' };

describe('messaging: TLS and SASL to Kafka, basic auth and TLS to the registry, from the environment', function () {
  this.timeout(60_000);
  let dir: string;
  let pki: ReturnType<typeof makePki>;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-pki-'));
    pki = makePki(dir);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads SASL_SSL with a CA, a client certificate and each SASL mechanism', () => {
    for (const [name, mechanism] of [
      ['PLAIN', 'plain'],
      ['SCRAM-SHA-256', 'scram-sha-256'],
      ['scram-sha-512', 'scram-sha-512'],
    ] as const) {
      const c = messagingConfigFromEnv('signer', {
        ...BASE,
        KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
        KAFKA_SSL_CA_FILE: pki.ca,
        KAFKA_SSL_CERT_FILE: pki.clientCert,
        KAFKA_SSL_KEY_FILE: pki.clientKey,
        KAFKA_SASL_MECHANISM: name,
        KAFKA_SASL_USERNAME: 'dte',
        KAFKA_SASL_PASSWORD: 's3cret',
      });
      expect(c.kafkaSecurity?.sasl).to.deep.equal({ mechanism, username: 'dte', password: 's3cret' });
      expect(c.kafkaSecurity?.ssl).to.deep.equal({
        ca: fs.readFileSync(pki.ca, 'utf8'),
        cert: fs.readFileSync(pki.clientCert, 'utf8'),
        key: fs.readFileSync(pki.clientKey, 'utf8'),
      });
    }
    // SSL with the system CAs; PLAINTEXT (the default) has no security at all
    expect(
      messagingConfigFromEnv('api', { ...BASE, KAFKA_SECURITY_PROTOCOL: 'SSL' }).kafkaSecurity,
    ).to.deep.equal({
      ssl: true,
    });
    expect(messagingConfigFromEnv('api', BASE)).to.not.have.property('kafkaSecurity');
  });

  it('refuses incomplete or contradictory settings, naming every variable at once', () => {
    const problems = (env: Record<string, string>) => {
      try {
        messagingConfigFromEnv('api', { ...BASE, ...env });
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    expect(problems({ KAFKA_SECURITY_PROTOCOL: 'TLS' })).to.include('KAFKA_SECURITY_PROTOCOL must be one of');
    const sasl = problems({ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_MECHANISM: 'GSSAPI' });
    expect(sasl)
      .to.include('KAFKA_SASL_MECHANISM must be one of')
      .and.include('KAFKA_SASL_USERNAME is required')
      .and.include('KAFKA_SASL_PASSWORD is required');
    expect(problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CERT_FILE: pki.clientCert })).to.include(
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together',
    );
    expect(
      problems({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_CA_FILE: path.join(dir, 'nope.pem') }),
    ).to.include('KAFKA_SSL_CA_FILE: cannot read');
    expect(problems({ KAFKA_SSL_CA_FILE: pki.ca })).to.include(
      'KAFKA_SSL_CA_FILE need KAFKA_SECURITY_PROTOCOL=SSL or SASL_SSL',
    );
    expect(problems({ KAFKA_SASL_PASSWORD: 'x' })).to.include(
      'need KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT or SASL_SSL',
    );
    expect(problems({ SCHEMA_REGISTRY_USERNAME: 'u' })).to.include(
      'SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD go together',
    );
    // the password never appears in the message
    expect(
      problems({ KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_PASSWORD: 'pw-9f8e7d' }),
    ).to.not.include('pw-9f8e7d');
  });

  it('registers a schema at an HTTPS registry signed by the configured CA, with basic auth', async () => {
    const seen: { auth?: string; path?: string }[] = [];
    const server = https.createServer(
      { cert: fs.readFileSync(pki.serverCert), key: fs.readFileSync(pki.serverKey) },
      (req, res) => {
        seen.push({ auth: req.headers.authorization, path: req.url });
        const ok =
          req.headers.authorization === `Basic ${Buffer.from('reg-user:reg-pass').toString('base64')}`;
        req.resume();
        req.on('end', () => {
          if (!ok)
            return res.writeHead(401, { 'content-type': 'application/json' }).end('{"error_code":401}');
          const body = req.url?.startsWith('/config/') ? '{"compatibilityLevel":"BACKWARD"}' : '{"id":42}';
          res.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' }).end(body);
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const c = messagingConfigFromEnv('api', {
        KAFKA_BROKERS: 'broker.example:9093',
        SCHEMA_REGISTRY_URL: url,
        SCHEMA_REGISTRY_USERNAME: 'reg-user',
        SCHEMA_REGISTRY_PASSWORD: 'reg-pass',
        SCHEMA_REGISTRY_CA_FILE: pki.ca,
      });
      const catalog = new SchemaCatalog(c.schemaRegistryUrl, DEFAULT_SCHEMA_DIR, c.registrySecurity);
      expect(await catalog.idFor('t.dte-status', 'dte-status')).to.equal(42);
      expect(seen.map((x) => x.path)).to.include('/subjects/t.dte-status-value/versions');
      // without the CA the registry's certificate is not trusted; without the password it is refused
      const untrusted = new SchemaCatalog(url, DEFAULT_SCHEMA_DIR, {
        auth: { username: 'reg-user', password: 'reg-pass' },
      });
      const e1 = await untrusted.idFor('t.dte-status', 'dte-status').then(
        () => undefined,
        (e: Error) => e,
      );
      expect(String(e1?.message)).to.match(/self[- ]signed|unable to verify|certificate/i);
      const anonymous = new SchemaCatalog(url, DEFAULT_SCHEMA_DIR, {
        tls: { ca: fs.readFileSync(pki.ca, 'utf8') },
      });
      const e2 = await anonymous.idFor('t.dte-status', 'dte-status').then(
        () => undefined,
        (e: Error) => e,
      );
      expect(e2, 'refused without credentials').to.be.instanceOf(Error);
      expect(seen.some((s) => s.auth === undefined)).to.equal(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
