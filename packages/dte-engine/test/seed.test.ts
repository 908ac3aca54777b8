import { expect } from 'chai';

import { signSeedDocument, verifySeedDocument } from '../src';
import { SENDER_RUT, testCredentials } from './support/credentials';
import { xmlsecVerify } from './support/oracles';

describe('signed seed for the SII login (getToken)', function () {
  it('has the PROTOCOL.md §2 shape and verifies with xmlsec1 (URI="" + enveloped-signature)', function () {
    const xml = signSeedDocument('000000000078', testCredentials().credential);
    expect(xml).to.match(
      /^<\?xml version="1\.0"\?>\n<getToken><item><Semilla>000000000078<\/Semilla><\/item><Signature /,
    );
    expect(xml).to.contain('<Reference URI="">');
    expect(xml).to.contain('Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"');
    expect(xml).to.match(
      /<KeyInfo><KeyValue><RSAKeyValue>.*<\/RSAKeyValue><\/KeyValue><X509Data><X509Certificate>/s,
    );
    const r = xmlsecVerify(xml);
    expect(r.ok, r.output).to.equal(true);
  });

  it('verifySeedDocument returns the seed and the signer, and rejects a changed seed', function () {
    const xml = signSeedDocument('000000000078', testCredentials().credential);
    const ok = verifySeedDocument(xml);
    expect(ok).to.include({ valid: true, seed: '000000000078' });
    expect(ok.certificate?.rut).to.equal(SENDER_RUT);
    const forged = xml.replace('000000000078', '000000000079');
    expect(xmlsecVerify(forged).ok).to.equal(false);
    expect(verifySeedDocument(forged)).to.include({ valid: false, seed: '000000000079' });
    expect(verifySeedDocument('<getToken><item><Semilla>1</Semilla></item></getToken>').error).to.match(
      /no Signature/,
    );
  });
});
