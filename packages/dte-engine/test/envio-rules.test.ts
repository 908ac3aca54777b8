import { readFileSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

import { ServiceError } from '@dte/error-catalog';

import { buildEnvioDte, cutOutDtes, stampAndSignDte, validateEnvioSchema, verifyTed } from '../src';
import { cafFor, SENDER_RUT, testCredentials, today } from './support/credentials';
import { EMISOR_RUT, sampleDocument } from './support/documents';
import { SCHEMAS } from './support/oracles';

function caught(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return err as ServiceError;
  }
  throw new Error('expected an error');
}

describe('EnvioDTE rules and document guards', function () {
  const opts = () => ({
    rutEmisor: EMISOR_RUT,
    rutEnvia: SENDER_RUT,
    fchResol: '2014-08-22',
    nroResol: 0,
    credential: testCredentials().credential,
    timestamp: new Date(),
  });
  const fake = (tipo: number): string =>
    `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="F1T${tipo}"><Encabezado><IdDoc><TipoDTE>${tipo}</TipoDTE></IdDoc><Emisor><RUTEmisor>${EMISOR_RUT}</RUTEmisor></Emisor></Encabezado></Documento></DTE>`;

  it('refuses more than 2000 DTE and more than 20 document types, saying so', function () {
    const tooMany = caught(() => buildEnvioDte(Array(2001).fill(fake(33)), opts()));
    expect(tooMany.code).to.equal('validation_failed');
    expect(tooMany.message).to.match(/at most 2000 DTE/);
    expect(tooMany.detail).to.deep.equal({ max: 2000, count: 2001 });
    const types = Array.from({ length: 21 }, (_, i) => fake(100 + i));
    const tooManyTypes = caught(() => buildEnvioDte(types, opts()));
    expect(tooManyTypes.message).to.match(/at most 20 document types/);
    expect(caught(() => buildEnvioDte([], opts())).code).to.equal('validation_failed');
    // the limits themselves are allowed
    const full = buildEnvioDte(Array(2000).fill(fake(33)), opts()).toString('latin1');
    expect(full).to.contain('<SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>2000</NroDTE></SubTotDTE>');
    const twenty = buildEnvioDte(types.slice(0, 20), opts()).toString('latin1');
    expect(twenty.match(/<SubTotDTE>/g)).to.have.length(20);
  });

  it('refuses a RutEnvia that is not the certificate holder, and a DTE of another issuer', function () {
    const dte = stampAndSignDte(sampleDocument(34, 300, today()), {
      caf: cafFor(34).caf,
      credential: testCredentials().credential,
      timestamp: new Date(),
    });
    expect(caught(() => buildEnvioDte([dte], { ...opts(), rutEnvia: '11111111-1' })).code).to.equal(
      'cert_subject_mismatch',
    );
    expect(caught(() => buildEnvioDte([dte], { ...opts(), rutEmisor: '96543210-8' })).code).to.equal(
      'emisor_rut_mismatch',
    );
  });

  it('refuses a DTE without its own SII namespace declaration (it would read differently cut out)', function () {
    const bare = fake(33).replace(' xmlns="http://www.sii.cl/SiiDte"', '');
    expect(caught(() => buildEnvioDte([bare], opts())).message).to.match(/does not declare xmlns/);
  });

  it('answers dte.field_not_latin1 for text outside ISO-8859-1 instead of writing "?"', function () {
    const doc = sampleDocument(34, 301, today());
    doc.Detalle[0] = { ...(doc.Detalle[0] as (typeof doc.Detalle)[0]), NmbItem: 'Asesoría — 2026 ✓' };
    const err = caught(() =>
      stampAndSignDte(doc, {
        caf: cafFor(34).caf,
        credential: testCredentials().credential,
        timestamp: new Date(),
      }),
    );
    expect(err.code).to.equal('dte.field_not_latin1');
    expect(err.detail).to.include({ element: 'NmbItem', char: '—', codepoint: 0x2014 });
  });

  it("reads the SII's official example: schema-valid, and its TED verifies with the CAF key it carries", async function () {
    const official = readFileSync(path.join(SCHEMAS, '..', 'F60T33-official-example.xml'));
    expect(await validateEnvioSchema(official)).to.deep.equal({ valid: true, errors: [] });
    const [dte] = cutOutDtes(official.toString('latin1'));
    expect(verifyTed(dte as string)).to.deep.equal({ valid: true });
  });
});
