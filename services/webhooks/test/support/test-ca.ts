import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestPki {
  dir: string;
  caCertPem: string;
  caFile: string;
  serverKeyPem: string;
  serverCertPem: string;
}

/**
 * A throw-away CA and a server certificate for the given names (DNS names and IPs), made with
 * openssl, so the receiver is real https verified against a CA the test controls.
 */
export function makeTestPki(names: string[] = ['localhost', '127.0.0.1', '::1']): TestPki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-pki-'));
  const f = (n: string) => path.join(dir, n);
  const ossl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  ossl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=webhooks test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
  ossl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('srv.key'),
    '-out',
    f('srv.csr'),
    '-subj',
    '/CN=webhook receiver',
  );
  const san = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  fs.writeFileSync(f('ext.cnf'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  ossl(
    'x509',
    '-req',
    '-in',
    f('srv.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('srv.crt'),
    '-days',
    '2',
    '-extfile',
    f('ext.cnf'),
  );
  return {
    dir,
    caCertPem: fs.readFileSync(f('ca.crt'), 'utf8'),
    caFile: f('ca.crt'),
    serverKeyPem: fs.readFileSync(f('srv.key'), 'utf8'),
    serverCertPem: fs.readFileSync(f('srv.crt'), 'utf8'),
  };
}
