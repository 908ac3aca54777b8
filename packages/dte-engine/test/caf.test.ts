import { expect } from 'chai';

import { ServiceError } from '@dte/error-catalog';

import {
  cafExpiryDate,
  createTestCaf,
  createTestSiiKey,
  parseCaf,
  stampAndSignDte,
  verifyCafSignature,
} from '../src';
import { cafFor, testCredentials, today } from './support/credentials';
import { EMISOR_RUT, sampleDocument } from './support/documents';
import { opensslVerify } from './support/oracles';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return (err as ServiceError).code;
  }
  return undefined;
}

describe('CAF parsing and checks', function () {
  const base = {
    rutEmisor: EMISOR_RUT,
    razonSocial: 'COMERCIAL DE PRUEBA',
    desde: 1,
    hasta: 50,
    keyBits: 512,
  };

  it('reads type, range, date, IDK and keys, and keeps the <CAF> element text byte for byte', function () {
    const { xml, caf } = cafFor(33);
    expect(caf).to.include({ rutEmisor: EMISOR_RUT, tipoDte: 33, desde: 1, hasta: 500, idk: 100 });
    expect(caf.fechaAutorizacion).to.equal(today());
    expect(xml).to.contain(caf.cafElementXml);
    expect(caf.cafElementXml.startsWith('<CAF version="1.0">')).to.equal(true);
    expect(caf.rsaPrivateKeyPem).to.contain('PRIVATE KEY');
    expect(caf.rsaPublicKeyPem).to.contain('PUBLIC KEY');
  });

  it('reads a Latin-1 CAF file given as bytes', function () {
    const { xml } = cafFor(33);
    const caf = parseCaf(Buffer.from(xml, 'latin1'));
    expect(caf.razonSocial).to.equal('COMERCIAL ÑANDÚ & COMPAÑÍA LIMITADA'.slice(0, 40));
  });

  it('FRMA verifies over the flattened DA with the SII key (verifyCafSignature and openssl), not with another key', function () {
    const { sii } = testCredentials();
    const { xml, caf } = cafFor(33);
    expect(verifyCafSignature(caf, sii.publicKeyPem)).to.equal(true);
    expect(verifyCafSignature(caf, sii.certificatePem)).to.equal(true);
    expect(verifyCafSignature(caf, createTestSiiKey(300).publicKeyPem)).to.equal(false);
    const da = (/<DA>[\s\S]*<\/DA>/.exec(xml)?.[0] as string).replace(/>\s+</g, '><');
    const frma = /<FRMA[^>]*>([^<]+)</.exec(xml)?.[1] as string;
    const r = opensslVerify(Buffer.from(da, 'latin1'), frma, sii.publicKeyPem);
    expect(r.ok, r.output).to.equal(true);
  });

  it('names the first day a CAF is no longer valid, the rule the simulator applies too', function () {
    expect(cafExpiryDate(33, '2025-01-10')).to.equal('2025-07-10');
    expect(cafExpiryDate(61, '2025-08-31')).to.equal('2026-03-03');
    expect(cafExpiryDate(52, '2025-01-10')).to.equal(null);
    expect(cafExpiryDate(110, '2025-01-10')).to.equal(null);
  });

  it('expires 6 months after FA for 33/46/56/61 (caf_expired), never for 52 and exports', function () {
    const { sii } = testCredentials();
    const old = createTestCaf({ ...base, siiKey: sii, tipoDte: 33, fechaAutorizacion: '2025-01-10' });
    expect(parseCaf(old, { now: new Date('2025-07-09T12:00:00Z') }).expiresAt?.toISOString()).to.equal(
      '2025-07-10T04:00:00.000Z',
    );
    expect(codeOf(() => parseCaf(old, { now: new Date('2025-07-11T12:00:00Z') }))).to.equal('caf_expired');
    expect(codeOf(() => parseCaf(old))).to.equal('caf_expired');
    const guia = createTestCaf({ ...base, siiKey: sii, tipoDte: 52, fechaAutorizacion: '2020-01-10' });
    expect(parseCaf(guia).expiresAt).to.equal(null);
    const exp = createTestCaf({ ...base, siiKey: sii, tipoDte: 110, fechaAutorizacion: '2020-01-10' });
    expect(parseCaf(exp).expiresAt).to.equal(null);
  });

  it('answers caf.wrong_tipo when the CAF is not of the expected type', function () {
    const { xml } = cafFor(33);
    expect(codeOf(() => parseCaf(xml, { expectedTipo: 61 }))).to.equal('caf.wrong_tipo');
    expect(parseCaf(xml, { expectedTipo: 33 }).tipoDte).to.equal(33);
  });

  const malformed: [string, (xml: string) => string][] = [
    ['no RE', (x) => x.replace(/<RE>[^<]*<\/RE>/, '')],
    ['no TD', (x) => x.replace(/<TD>[^<]*<\/TD>/, '')],
    ['no D', (x) => x.replace(/<D>[^<]*<\/D>/, '')],
    ['no H', (x) => x.replace(/<H>[^<]*<\/H>/, '')],
    ['H before D', (x) => x.replace(/<H>[^<]*<\/H>/, '<H>0</H>')],
    ['non-numeric TD', (x) => x.replace(/<TD>[^<]*<\/TD>/, '<TD>XX</TD>')],
    ['no RSASK', (x) => x.replace(/<RSASK>[\s\S]*<\/RSASK>/, '')],
    ['garbled RSAPUBK', (x) => x.replace(/<RSAPUBK>[\s\S]*<\/RSAPUBK>/, '<RSAPUBK>not a key</RSAPUBK>')],
    ['no FRMA', (x) => x.replace(/<FRMA[^>]*>[^<]*<\/FRMA>/, '')],
    ['not XML', () => 'this is not xml'],
    ['truncated', (x) => x.slice(0, x.length / 2)],
  ];
  for (const [what, mutate] of malformed) {
    it(`answers caf.parse_error for a CAF with ${what}`, function () {
      expect(codeOf(() => parseCaf(mutate(cafFor(33).xml)))).to.equal('caf.parse_error');
    });
  }

  it('answers caf.parse_error when RSASK and RSAPUBK are not a pair, or RSAPK is another key', function () {
    const a = cafFor(33).xml;
    const b = cafFor(34).xml;
    const sk = (x: string): string => /<RSASK>[\s\S]*<\/RSASK>/.exec(x)?.[0] as string;
    const pk = (x: string): string => /<RSAPK>[\s\S]*<\/RSAPK>/.exec(x)?.[0] as string;
    expect(codeOf(() => parseCaf(a.replace(sk(a), sk(b))))).to.equal('caf.parse_error');
    expect(codeOf(() => parseCaf(a.replace(pk(a), pk(b))))).to.equal('caf.parse_error');
  });

  it('stamping refuses a CAF of another type, a folio outside the range, another issuer or an expired CAF', function () {
    const { credential, sii } = testCredentials();
    const timestamp = new Date();
    const doc33 = sampleDocument(33, 5, today());
    expect(codeOf(() => stampAndSignDte(doc33, { caf: cafFor(34).caf, credential, timestamp }))).to.equal(
      'caf.wrong_tipo',
    );
    const outside = sampleDocument(33, 501, today());
    expect(codeOf(() => stampAndSignDte(outside, { caf: cafFor(33).caf, credential, timestamp }))).to.equal(
      'caf_not_found',
    );
    const otherIssuer = sampleDocument(33, 5, today());
    otherIssuer.Encabezado.Emisor = { ...otherIssuer.Encabezado.Emisor, RUTEmisor: '11111111-1' };
    expect(
      codeOf(() => stampAndSignDte(otherIssuer, { caf: cafFor(33).caf, credential, timestamp })),
    ).to.equal('emisor_rut_mismatch');
    const old = parseCaf(
      createTestCaf({ ...base, siiKey: sii, tipoDte: 33, fechaAutorizacion: '2025-01-10' }),
      {
        now: new Date('2025-02-01'),
      },
    );
    expect(codeOf(() => stampAndSignDte(doc33, { caf: old, credential, timestamp }))).to.equal('caf_expired');
  });
});
