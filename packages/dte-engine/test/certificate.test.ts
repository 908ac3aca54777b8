import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';

import { expect } from 'chai';

import { ServiceError } from '@dte/error-catalog';

import { createTestP12, readCertificate, readP12, stampAndSignDte } from '../src';
import { cafFor, today } from './support/credentials';
import { sampleDocument } from './support/documents';
import { standaloneDte, xmlsecVerify } from './support/oracles';
import {
  mergeP12,
  opensslFingerprint256,
  opensslP12,
  opensslP12Certificate,
  opensslSelfSigned,
} from './support/p12';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return (err as ServiceError).code;
  }
  return undefined;
}

/** What `openssl pkcs12 -info` says about the file's encryption (it writes that to stderr). */
function pbeOf(p12: Buffer, password: string): string {
  const r = spawnSync('openssl', ['pkcs12', '-info', '-noout', '-legacy', '-passin', `pass:${password}`], {
    input: p12,
    encoding: 'utf8',
  });
  return `${r.stdout}${r.stderr}`;
}

describe('certificates and .p12 files', function () {
  it('reads the fixture .p12: RUT from SAN otherName, dates, and the fingerprint openssl computes', function () {
    const p12 = createTestP12({ rut: '07880442-4', name: 'Wilibaldo Prueba', password: 'pw' });
    const cred = readP12(p12, 'pw');
    expect(cred.info.rut).to.equal('7880442-4');
    expect(cred.info.subject).to.contain('CN=Wilibaldo Prueba');
    const opensslCert = opensslP12Certificate(p12, 'pw');
    expect(cred.info.fingerprintSha256).to.equal(opensslFingerprint256(opensslCert));
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], {
      input: cred.certificatePem,
      encoding: 'utf8',
    });
    expect(text).to.match(/1\.3\.6\.1\.4\.1\.8321\.1.*07880442-4/);
    expect(cred.info.notAfter.getTime()).to.be.greaterThan(Date.now());
    expect(cred.info.notBefore.getTime()).to.be.lessThan(Date.now());
  });

  it('reads a legacy 3DES .p12 from the fixture maker (openssl confirms the PBE)', function () {
    const p12 = createTestP12({ rut: '12345678-5', password: 'pw', legacy: true });
    expect(pbeOf(p12, 'pw')).to.contain('pbeWithSHA1And3-KeyTripleDES-CBC');
    expect(readP12(p12, 'pw').info.rut).to.equal('12345678-5');
  });

  it('reads .p12 files made by openssl: -legacy (RC2-40 certificates, 3DES key) and the modern AES default', function () {
    const { keyPem, certPem } = opensslSelfSigned('/CN=JUAN PEREZ SOTO/serialNumber=12.345.678-5');
    const legacy = opensslP12({ keyPem, certPem, password: 'pw', legacy: true });
    expect(pbeOf(legacy, 'pw')).to.contain('pbeWithSHA1And40BitRC2-CBC');
    const modern = opensslP12({ keyPem, certPem, password: 'pw' });
    for (const p12 of [legacy, modern]) {
      const cred = readP12(p12, 'pw');
      // no SAN: the RUT comes from the subject serialNumber
      expect(cred.info.rut).to.equal('12345678-5');
      expect(cred.info.fingerprintSha256).to.equal(opensslFingerprint256(certPem));
    }
  });

  it('falls back to a RUT written in the CN', function () {
    const { certPem } = opensslSelfSigned('/CN=MARIA SOTO 9.876.543-3');
    expect(readCertificate(certPem).rut).to.equal('9876543-3');
  });

  it('picks the certificate matching the key when the .p12 also holds a CA certificate', function () {
    const user = opensslSelfSigned('/CN=USUARIO/serialNumber=12345678-5');
    const ca = opensslSelfSigned('/CN=AUTORIDAD CERTIFICADORA/serialNumber=99999999-9');
    const p12 = opensslP12({ ...user, password: 'pw', extraCertsPem: ca.certPem });
    const cred = readP12(p12, 'pw');
    expect(cred.info.rut).to.equal('12345678-5');
    expect(cred.info.fingerprintSha256).to.equal(opensslFingerprint256(user.certPem));
  });

  it('with two keys in the .p12, signs with the one that matches the certificate', function () {
    const stray = opensslSelfSigned('/CN=OTRA');
    const real = opensslSelfSigned('/CN=TITULAR/serialNumber=12345678-5');
    const strayKeyOnly = opensslP12({ ...stray, password: 'pw', noCerts: true });
    const realPair = opensslP12({ ...real, password: 'pw' });
    // a file with a stray key (no certificate of its own) first, then the real pair
    const merged = mergeP12([strayKeyOnly, realPair], 'pw');
    // openssl itself reads the merged file
    expect(opensslP12Certificate(merged, 'pw')).to.contain('BEGIN CERTIFICATE');
    const cred = readP12(merged, 'pw');
    expect(cred.info.rut).to.equal('12345678-5');
    expect(
      new X509Certificate(cred.certificatePem).checkPrivateKey(createPrivateKey(cred.privateKeyPem)),
    ).to.equal(true);
    expect(new X509Certificate(real.certPem).checkPrivateKey(createPrivateKey(cred.privateKeyPem))).to.equal(
      true,
    );
    const dte = stampAndSignDte(sampleDocument(33, 77, today()), {
      caf: cafFor(33).caf,
      credential: cred,
      timestamp: new Date(),
    });
    const r = xmlsecVerify(standaloneDte(dte));
    expect(r.ok, r.output).to.equal(true);
  });

  it('answers cert.invalid for a wrong password, a file that is not PKCS#12, and a certificate without RUT', function () {
    const p12 = createTestP12({ rut: '12345678-5', password: 'pw' });
    expect(codeOf(() => readP12(p12, 'wrong'))).to.equal('cert.invalid');
    expect(codeOf(() => readP12(Buffer.from('not a p12 file at all'), 'pw'))).to.equal('cert.invalid');
    const anonymous = opensslSelfSigned('/CN=SIN RUT');
    expect(codeOf(() => readP12(opensslP12({ ...anonymous, password: 'pw' }), 'pw'))).to.equal(
      'cert.invalid',
    );
    expect(
      codeOf(() => readCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')),
    ).to.equal('cert.invalid');
  });

  it('refuses to sign with an expired certificate (cert_expired with detail.expiredAt)', function () {
    const notAfter = new Date(Date.now() - 86400000);
    const cred = readP12(
      createTestP12({
        rut: '12345678-5',
        password: 'pw',
        notBefore: new Date(Date.now() - 10 * 86400000),
        notAfter,
      }),
      'pw',
    );
    let err: ServiceError | undefined;
    try {
      stampAndSignDte(sampleDocument(33, 78, today()), {
        caf: cafFor(33).caf,
        credential: cred,
        timestamp: new Date(),
      });
    } catch (e) {
      err = e as ServiceError;
    }
    expect(err?.code).to.equal('cert_expired');
    expect(err?.detail?.expiredAt).to.equal(cred.info.notAfter.toISOString());
  });
});
