import { DOMParser } from '@xmldom/xmldom';
import { expect } from 'chai';

import {
  buildEnvioDte,
  createTestP12,
  createTestSiiKey,
  readP12,
  stampAndSignDte,
  verifyEnvioDte,
  verifyTed,
} from '../src';
import { cafFor, SENDER_RUT, testCredentials, today } from './support/credentials';
import { EMISOR_RUT, sampleDocument } from './support/documents';

/**
 * The verifier imports each public key once per key text (the signer's, each CAF's, the SII's):
 * a key seen and trusted before must never stand in for another. Each case below first verifies
 * the genuine documents (so their keys are cached), then presents a document with another key
 * in the same place, in the same envelope or call.
 */
describe('public keys read once are never confused with other keys', function () {
  const element = (xml: string, name: string): string =>
    new RegExp(`<${name}>[^<]*</${name}>`).exec(xml)?.[0] as string;
  let genuine: string;
  let other: string;
  const envelopeOf = (dtes: string[]): Buffer =>
    buildEnvioDte(dtes, {
      rutEmisor: EMISOR_RUT,
      rutEnvia: SENDER_RUT,
      fchResol: '2014-08-22',
      nroResol: 0,
      credential: testCredentials().credential,
      timestamp: new Date(),
    });
  const siiKeys = (): Record<string, string> => ({ '100': testCredentials().sii.publicKeyPem });

  before(function () {
    const timestamp = new Date();
    genuine = stampAndSignDte(sampleDocument(33, 50, today()), {
      caf: cafFor(33).caf,
      credential: testCredentials().credential,
      timestamp,
    });
    // the same kind of document, signed by another certificate and stamped with another CAF
    other = stampAndSignDte(sampleDocument(34, 51, today()), {
      caf: cafFor(34).caf,
      credential: readP12(createTestP12({ rut: '11111111-1', password: 'x' }), 'x'),
      timestamp,
    });
    const v = verifyEnvioDte(envelopeOf([genuine, other]), { siiPublicKeys: siiKeys() });
    expect(v.documents.map((d) => [d.signatureValid, d.tedValid, d.cafSignatureValid])).to.deep.equal([
      [true, true, true],
      [true, true, true],
    ]);
  });

  it('a DTE whose RSAKeyValue is another known key does not verify, beside the genuine one', function () {
    const swapped = genuine.replace(element(genuine, 'Modulus'), element(other, 'Modulus'));
    expect(swapped).not.to.equal(genuine);
    const v = verifyEnvioDte(envelopeOf([genuine, swapped, genuine]), { siiPublicKeys: siiKeys() });
    expect(v.documents.map((d) => d.signatureValid)).to.deep.equal([true, false, true]);
    expect(v.documents[1]?.signatureError).to.match(/does not verify|digest/);
  });

  it('a DTE whose X509Certificate holds another known key is refused even though the math verifies', function () {
    const swapped = genuine.replace(element(genuine, 'X509Certificate'), element(other, 'X509Certificate'));
    expect(swapped).not.to.equal(genuine);
    const v = verifyEnvioDte(envelopeOf([genuine, swapped]), { siiPublicKeys: siiKeys() });
    expect(v.documents[0]?.signatureValid).to.equal(true);
    expect(v.documents[1]?.signatureValid).to.equal(false);
    expect(v.documents[1]?.signatureError).to.match(/X509Certificate holds another key/);
  });

  it("a TED whose CAF carries another known CAF's key fails FRMT, and FRMA too", function () {
    const swapped = genuine.replace(element(genuine, 'M'), element(other, 'M'));
    expect(swapped).not.to.equal(genuine);
    expect(verifyTed(genuine).valid).to.equal(true);
    expect(verifyTed(swapped).error).to.match(/FRMT does not verify/);
    const v = verifyEnvioDte(envelopeOf([genuine, swapped]), { siiPublicKeys: siiKeys() });
    expect(v.documents.map((d) => [d.tedValid, d.cafSignatureValid])).to.deep.equal([
      [true, true],
      [false, false],
    ]);
    // a CAF key given as PEM: the other CAF's key, known by now, does not verify this TED
    expect(verifyTed(genuine, cafFor(34).caf.rsaPublicKeyPem).valid).to.equal(false);
    expect(verifyTed(genuine, cafFor(33).caf.rsaPublicKeyPem).valid).to.equal(true);
  });

  it('CAF FRMAs checked with another SII key under the same IDK fail, and pass again with the right one', function () {
    const envio = envelopeOf([genuine]);
    const impostor = { '100': createTestSiiKey(100).publicKeyPem };
    expect(verifyEnvioDte(envio, { siiPublicKeys: impostor }).documents[0]?.cafSignatureValid).to.equal(
      false,
    );
    expect(verifyEnvioDte(envio, { siiPublicKeys: siiKeys() }).documents[0]?.cafSignatureValid).to.equal(
      true,
    );
    expect(verifyEnvioDte(envio, { siiPublicKeys: impostor }).documents[0]?.cafError).to.match(
      /FRMA does not verify with the SII key 100/,
    );
  });
});

describe('verifyEnvioDte with the envelope already parsed by the caller', function () {
  const envelopeOf = (dtes: string[], nroResol = 0): Buffer =>
    buildEnvioDte(dtes, {
      rutEmisor: EMISOR_RUT,
      rutEnvia: SENDER_RUT,
      fchResol: '2014-08-22',
      nroResol,
      credential: testCredentials().credential,
      timestamp: new Date(),
    });
  const parse = (text: string) => new DOMParser().parseFromString(text, 'text/xml');

  it('reads the same from the given tree as from the file, and ignores a tree of another text', function () {
    const dte = stampAndSignDte(sampleDocument(33, 60, today()), {
      caf: cafFor(33).caf,
      credential: testCredentials().credential,
      timestamp: new Date(),
    });
    const envio = envelopeOf([dte]);
    const text = envio.toString('latin1');
    const fromFile = verifyEnvioDte(envio);
    expect(verifyEnvioDte(envio, { parsed: { text, document: parse(text) } })).to.deep.equal(fromFile);
    expect(fromFile.envelopeSignature.valid).to.equal(true);

    // a tree made from another text (here: another resolution number, unsigned) is not used
    const otherText = text.replace('<NroResol>0</NroResol>', '<NroResol>80</NroResol>');
    expect(otherText).not.to.equal(text);
    const v = verifyEnvioDte(envio, { parsed: { text: otherText, document: parse(otherText) } });
    expect(v.caratula.nroResol).to.equal(0);
    expect(v).to.deep.equal(fromFile);
  });
});
