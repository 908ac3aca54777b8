import { expect } from 'chai';

import { cutOutDtes, validateEnvioSchema, verifyEnvioDte } from '../src';
import { cafFor, SENDER_RUT, testCredentials } from './support/credentials';
import { EMISOR_RUT, SIGNED_TYPES } from './support/documents';
import { signedSampleEnvio } from './support/envelopes';
import {
  ENVELOPE_SIGNATURE,
  opensslVerifyTed,
  standaloneDte,
  xmllintSchema,
  xmlsecVerify,
} from './support/oracles';

describe('EnvioDTE of every type, checked by xmllint, xmlsec1 and openssl', function () {
  let envio: Buffer;
  let dtes: string[];

  before(function () {
    ({ dtes, envio } = signedSampleEnvio(SIGNED_TYPES, 10));
  });

  it('is ISO-8859-1 with its declaration, and valid against EnvioDTE_v10.xsd (system xmllint)', function () {
    expect(envio.subarray(0, 44).toString('latin1')).to.equal(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n',
    );
    // Latin-1 bytes, not UTF-8: "Ñ" is the single byte 0xD1
    expect(envio.includes(Buffer.from([0xd1]))).to.equal(true);
    expect(envio.includes(Buffer.from('Ñ', 'utf8'))).to.equal(false);
    const r = xmllintSchema(envio);
    expect(r.ok, r.output).to.equal(true);
  });

  for (const engine of ['wasm', 'system', 'resident'] as const) {
    it(`passes the engine's own schema check (${engine}), which also rejects a broken one or non-XML`, async function () {
      expect(await validateEnvioSchema(envio, { engine })).to.deep.equal({ valid: true, errors: [] });
      const broken = Buffer.from(
        envio.toString('latin1').replace('<NroResol>0</NroResol>', '<NroResol>x</NroResol>'),
        'latin1',
      );
      const r = await validateEnvioSchema(broken, { engine });
      expect(r.valid).to.equal(false);
      expect(r.errors.join('\n')).to.match(/NroResol/);
      const garbage = await validateEnvioSchema('<EnvioDTE', { engine });
      expect(garbage.valid).to.equal(false);
      expect(garbage.errors.length).to.be.greaterThan(0);
    });
  }

  it('has the form that reads the same both ways: no xmlns:xsi on the root, DTEs declaring the SII namespace', function () {
    const text = envio.toString('latin1');
    expect(text).to.match(
      /^<\?xml[^>]+\?>\n<EnvioDTE xmlns="http:\/\/www\.sii\.cl\/SiiDte" version="1\.0"><SetDTE ID="SetDoc">/,
    );
    expect(text).not.to.contain('xmlns:xsi');
    expect(cutOutDtes(text)).to.deep.equal(dtes);
    expect(text).to.contain('<RutReceptor>60803000-K</RutReceptor>');
    for (const tipo of SIGNED_TYPES)
      expect(text).to.contain(`<SubTotDTE><TpoDTE>${tipo}</TpoDTE><NroDTE>1</NroDTE></SubTotDTE>`);
  });

  it('has a SetDTE signature that xmlsec1 verifies inside the whole envelope', function () {
    const r = xmlsecVerify(envio, ENVELOPE_SIGNATURE);
    expect(r.ok, r.output).to.equal(true);
  });

  for (const [i, tipo] of SIGNED_TYPES.entries()) {
    it(`type ${tipo}: the DTE cut out of the envelope text verifies alone with xmlsec1, and in place too`, function () {
      const text = envio.toString('latin1');
      const dte = cutOutDtes(text)[i] as string;
      const alone = xmlsecVerify(standaloneDte(dte));
      expect(alone.ok, alone.output).to.equal(true);
      const inPlace = xmlsecVerify(envio, `(//*[local-name()='DTE'])[${i + 1}]/*[local-name()='Signature']`);
      expect(inPlace.ok, inPlace.output).to.equal(true);
    });

    it(`type ${tipo}: the TED's FRMT verifies with openssl over the flattened DD and the CAF public key`, function () {
      const dte = cutOutDtes(envio.toString('latin1'))[i] as string;
      const r = opensslVerifyTed(dte, cafFor(tipo).caf.rsaPublicKeyPem);
      expect(r.ok, r.output).to.equal(true);
      expect(r.output).to.contain('Verified OK');
    });
  }

  it('uses <Exportaciones> for 110/111/112 and <Documento> for the rest, with IDs F<folio>T<tipo>', function () {
    for (const [i, tipo] of SIGNED_TYPES.entries()) {
      const el = tipo >= 110 ? 'Exportaciones' : 'Documento';
      expect(dtes[i]).to.contain(
        `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><${el} ID="F${10 + i}T${tipo}">`,
      );
    }
  });

  it('is read back by verifyEnvioDte with every signature, TED and CAF valid', function () {
    const { sii } = testCredentials();
    const v = verifyEnvioDte(envio, { siiPublicKeys: { '100': sii.publicKeyPem } });
    expect(v.caratula).to.include({
      rutEmisor: EMISOR_RUT,
      rutEnvia: SENDER_RUT,
      rutReceptor: '60803000-K',
      nroResol: 0,
    });
    expect(v.caratula.subTotales).to.have.length(SIGNED_TYPES.length);
    expect(v.envelopeSignature.valid, v.envelopeSignature.error).to.equal(true);
    expect(v.envelopeSignature.certificate?.rut).to.equal(SENDER_RUT);
    expect(v.documents.map((d) => d.tipoDte)).to.deep.equal(SIGNED_TYPES);
    for (const d of v.documents) {
      expect(d.signatureValid, `${d.id}: ${d.signatureError}`).to.equal(true);
      expect(d.tedValid, `${d.id}: ${d.tedError}`).to.equal(true);
      expect(d.totalsValid, `${d.id}: ${d.totalsError}`).to.equal(true);
      // the SII's amount review finds nothing in a document the engine built
      expect(d.amountFindings, d.id).to.deep.equal([]);
      expect(d.cafSignatureValid, `${d.id}: ${d.cafError}`).to.equal(true);
      expect(d.caf).to.include({ desde: 1, hasta: 500, idk: 100, tipoDte: d.tipoDte, rutEmisor: EMISOR_RUT });
    }
    expect(v.documents.find((d) => d.tipoDte === 110)?.mntTotal).to.equal(1234.56);
  });
});
