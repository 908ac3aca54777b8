import { expect } from 'chai';

import { buildEnvioDte, stampAndSignDte, verifyEnvioDte } from '../src';
import { canonicalSetDte, fastCanonicalSetDte } from '../src/envio';
import { C14nCanonicalization } from 'xml-crypto';

import { canonicalForm, canonicalInEnvelope } from '../src/xml/canonical';
import { childElements, parseXml } from '../src/xml/dom';
import { SII_NS } from '../src/xml/dte-xml';
import { cafFor, SENDER_RUT, testCredentials, today } from './support/credentials';
import { EMISOR_RUT, SIGNED_TYPES, sampleDocument } from './support/documents';
import { ENVELOPE_SIGNATURE, standaloneDte, xmlsecVerify } from './support/oracles';

describe('envelope canonicalization: text fast path and real C14N agree', function () {
  const root = '<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0">';
  const caratula = '<Caratula version="1.0"><RutEmisor>76192083-9</RutEmisor></Caratula>';
  let dtes: string[];

  before(function () {
    const { credential } = testCredentials();
    dtes = SIGNED_TYPES.map((tipo, i) =>
      stampAndSignDte(sampleDocument(tipo, 200 + i, today()), {
        caf: cafFor(tipo).caf,
        credential,
        timestamp: new Date(),
      }),
    );
  });

  it('gives byte-identical C14N of the SetDTE for the DTEs this package writes', function () {
    const fast = fastCanonicalSetDte('SetDoc', caratula, dtes);
    expect(fast).to.be.a('string');
    expect(fast).to.equal(canonicalSetDte(root, `<SetDTE ID="SetDoc">${caratula}${dtes.join('')}</SetDTE>`));
  });

  it('canonicalForm of each Documento as apex equals xml-crypto C14N of the parsed standalone DTE', function () {
    for (const dte of dtes) {
      const doc = parseXml(dte);
      const el = childElements(doc.documentElement as never)[0] as never;
      const expected = new C14nCanonicalization().process(el, {});
      const text = /^<DTE[^>]*>(<(Documento|Exportaciones) [\s\S]*<\/\2>)<Signature/.exec(dte)?.[1] as string;
      expect(canonicalForm(text, SII_NS, true)).to.equal(expected);
      // and as the child of a rendered parent in the same namespace, unchanged
      expect(canonicalForm(text, SII_NS, false)).to.equal(text);
    }
  });

  it('canonicalForm drops a redundant default namespace, keeps a different one, and refuses what it cannot vouch for', function () {
    const ns = 'urn:a';
    expect(
      canonicalForm('<a xmlns="urn:a"><b xmlns="urn:a">x</b><c xmlns="urn:c"></c></a>', ns, true),
    ).to.equal('<a xmlns="urn:a"><b>x</b><c xmlns="urn:c"></c></a>');
    expect(canonicalForm('<a><b>x</b></a>', ns, true)).to.equal('<a xmlns="urn:a"><b>x</b></a>');
    expect(canonicalForm('<a xmlns="urn:a"></a>', ns, false)).to.equal('<a></a>');
    for (const bad of [
      '<a/>',
      '<a b="1" a="2"></a>',
      '<a>x > y</a>',
      '<a>&#65;</a>',
      "<a b='1'></a>",
      '<a><![CDATA[x]]></a>',
      '<a></a><b></b>',
      '<a><b></a></b>',
      '<x:a xmlns:x="urn:x"></x:a>',
      '<a xmlns=""></a>',
    ]) {
      expect(canonicalForm(bad, ns, true), bad).to.equal(undefined);
    }
  });

  const equivalent: [string, (dte: string) => string][] = [
    ['a space inside an end tag', (d) => d.replace('</Detalle>', '</Detalle >')],
    [
      'a CDATA section',
      (d) => d.replace(/<NroLinDet>1<\/NroLinDet>/, '<NroLinDet><![CDATA[1]]></NroLinDet>'),
    ],
    [
      'a character reference',
      (d) => d.replace('<GiroRecep>Comercio</GiroRecep>', '<GiroRecep>&#67;omercio</GiroRecep>'),
    ],
    ['a comment', (d) => d.replace('<Encabezado>', '<Encabezado><!-- nota -->')],
  ];
  for (const [what, mutate] of equivalent) {
    it(`falls back to the real canonicalizer for a DTE with ${what}, and the envelope still verifies`, function () {
      const changed = mutate(dtes[0] as string);
      expect(changed).not.to.equal(dtes[0]);
      expect(canonicalInEnvelope(changed)).to.equal(undefined);
      // the change is invisible to C14N: the DTE's own signature still holds standalone
      expect(xmlsecVerify(standaloneDte(changed)).ok).to.equal(true);
      const { credential } = testCredentials();
      const envio = buildEnvioDte([changed, ...dtes.slice(1)], {
        rutEmisor: EMISOR_RUT,
        rutEnvia: SENDER_RUT,
        fchResol: '2014-08-22',
        nroResol: 0,
        credential,
        timestamp: new Date(),
      });
      const r = xmlsecVerify(envio, ENVELOPE_SIGNATURE);
      expect(r.ok, r.output).to.equal(true);
      expect(verifyEnvioDte(envio).envelopeSignature.valid).to.equal(true);
    });
  }
});
