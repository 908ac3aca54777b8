import { readFileSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

import { buildEnvioDte, createTestP12, readP12, stampAndSignDte, verifyEnvioDte, verifyTed } from '../src';
import { cafFor, SENDER_RUT, testCredentials, today } from './support/credentials';
import { EMISOR_RUT, sampleDocument } from './support/documents';
import {
  ENVELOPE_SIGNATURE,
  SCHEMAS,
  opensslVerifyTed,
  standaloneDte,
  xmlsecVerify,
} from './support/oracles';

describe('tampered documents are caught by xmlsec1, openssl and verifyEnvioDte', function () {
  let dte: string;
  let envio: Buffer;

  before(function () {
    const { credential } = testCredentials();
    const timestamp = new Date();
    dte = stampAndSignDte(sampleDocument(33, 42, today()), { caf: cafFor(33).caf, credential, timestamp });
    envio = buildEnvioDte([dte], {
      rutEmisor: EMISOR_RUT,
      rutEnvia: SENDER_RUT,
      fchResol: '2014-08-22',
      nroResol: 0,
      credential,
      timestamp,
    });
  });

  it('an amount changed after signing breaks the DTE signature and the TED (the DD no longer matches)', function () {
    const forged = dte.replace('<MntTotal>112340</MntTotal>', '<MntTotal>1340</MntTotal>');
    expect(forged).not.to.equal(dte);
    expect(xmlsecVerify(standaloneDte(forged)).ok).to.equal(false);
    const ted = verifyTed(forged);
    expect(ted.valid).to.equal(false);
    expect(ted.error).to.match(/MNT/);
    // the untouched DD still carries a valid FRMT: the mismatch is what gives the forgery away
    expect(opensslVerifyTed(forged, cafFor(33).caf.rsaPublicKeyPem).ok).to.equal(true);
  });

  it('an amount changed inside the DD breaks the TED signature (openssl) and both XML signatures', function () {
    const forged = dte.replace('<MNT>112340</MNT>', '<MNT>1340</MNT>');
    expect(forged).not.to.equal(dte);
    expect(opensslVerifyTed(forged, cafFor(33).caf.rsaPublicKeyPem).ok).to.equal(false);
    expect(verifyTed(forged).error).to.match(/FRMT does not verify/);
    expect(xmlsecVerify(standaloneDte(forged)).ok).to.equal(false);

    const forgedEnvio = Buffer.from(
      envio.toString('latin1').replace('<MNT>112340</MNT>', '<MNT>1340</MNT>'),
      'latin1',
    );
    expect(xmlsecVerify(forgedEnvio, ENVELOPE_SIGNATURE).ok).to.equal(false);
    const v = verifyEnvioDte(forgedEnvio);
    expect(v.envelopeSignature.valid).to.equal(false);
    expect(v.documents[0]?.signatureValid).to.equal(false);
    expect(v.documents[0]?.tedValid).to.equal(false);
    expect(v.documents[0]?.totalsValid).to.equal(true);
  });

  it('a total that does not add up is reported by the header arithmetic check', function () {
    const forged = Buffer.from(
      envio.toString('latin1').replace('<IVA>16340</IVA>', '<IVA>16341</IVA>'),
      'latin1',
    );
    const d = verifyEnvioDte(forged).documents[0];
    expect(d?.totalsValid).to.equal(false);
    expect(d?.totalsError).to.match(/IVA 16341/);
  });

  it('a change in the Caratula breaks only the envelope signature', function () {
    const forged = Buffer.from(
      envio.toString('latin1').replace('<NroResol>0</NroResol>', '<NroResol>80</NroResol>'),
      'latin1',
    );
    expect(xmlsecVerify(forged, ENVELOPE_SIGNATURE).ok).to.equal(false);
    const v = verifyEnvioDte(forged);
    expect(v.envelopeSignature.valid).to.equal(false);
    expect(v.documents[0]?.signatureValid).to.equal(true);
  });

  it('the TED does not verify with another CAF key (openssl and verifyTed)', function () {
    const otherKey = cafFor(34).caf.rsaPublicKeyPem;
    expect(opensslVerifyTed(dte, otherKey).ok).to.equal(false);
    expect(verifyTed(dte, otherKey).valid).to.equal(false);
    expect(verifyTed(dte, cafFor(33).caf.rsaPublicKeyPem).valid).to.equal(true);
  });

  it('a signature whose KeyInfo is swapped for another certificate and key fails', function () {
    const other = readP12(createTestP12({ rut: '11111111-1', password: 'x' }), 'x');
    const otherDte = stampAndSignDte(sampleDocument(33, 43, today()), {
      caf: cafFor(33).caf,
      credential: other,
      timestamp: new Date(),
    });
    const keyInfo = (s: string): string => /<KeyInfo>[\s\S]*<\/KeyInfo>/.exec(s)?.[0] as string;
    const swapped = dte.replace(keyInfo(dte), keyInfo(otherDte));
    expect(xmlsecVerify(standaloneDte(swapped)).ok).to.equal(false);
    const v = verifyEnvioDte(
      buildEnvioDte([swapped], {
        rutEmisor: EMISOR_RUT,
        rutEnvia: SENDER_RUT,
        fchResol: '2014-08-22',
        nroResol: 0,
        credential: testCredentials().credential,
        timestamp: new Date(),
      }),
    );
    expect(v.documents[0]?.signatureValid).to.equal(false);
    expect(v.envelopeSignature.valid).to.equal(true);
  });

  it('an RSAKeyValue that does not match the X509Certificate is reported even when the math verifies', function () {
    // the SII's own example: its certificate holds another key than the one that signed
    const v = verifyEnvioDte(readFileSync(path.join(SCHEMAS, '..', 'F60T33-official-example.xml')));
    expect(v.documents[0]?.signatureError).to.match(/X509Certificate holds another key/);
    expect(v.envelopeSignature.error).to.match(/X509Certificate holds another key/);
    expect(v.documents[0]?.tedValid).to.equal(true);
    expect(v.envelopeSignature.certificate?.rut).to.equal('7880442-4');
  });
});

describe('verifyEnvioDte on a DTE that only parses inside its envelope', function () {
  it('reports that DTE as unreadable standalone instead of throwing', function () {
    const { credential } = testCredentials();
    const timestamp = new Date();
    const dte = stampAndSignDte(sampleDocument(34, 90, today()), {
      caf: cafFor(34).caf,
      credential,
      timestamp,
    });
    const envio = buildEnvioDte([dte], {
      rutEmisor: EMISOR_RUT,
      rutEnvia: SENDER_RUT,
      fchResol: '2014-08-22',
      nroResol: 0,
      credential,
      timestamp,
    });
    // a prefix declared on the root and used inside the DTE: fine in place, unbound once cut out
    const text = envio
      .toString('latin1')
      .replace(
        '<EnvioDTE xmlns="http://www.sii.cl/SiiDte"',
        '<EnvioDTE xmlns:x="urn:x" xmlns="http://www.sii.cl/SiiDte"',
      )
      .replace('<Encabezado>', '<Encabezado x:a="1">');
    const v = verifyEnvioDte(text);
    expect(v.documents).to.have.length(1);
    expect(v.documents[0]?.signatureValid).to.equal(false);
    expect(v.documents[0]?.signatureError).to.match(/cannot be read as a standalone document/);
  });
});
