import { XMLSerializer } from '@xmldom/xmldom';
import { expect } from 'chai';

import { cutOutDtes, readEnvio, verifyEnvioDte } from '../src';
import { decodeXml } from '../src/xml/decode';
import { childElements, firstChild, parseXml } from '../src/xml/dom';
import { createTestSiiKey } from '../src';
import { signedSampleEnvio } from './support/envelopes';
import { testCredentials } from './support/credentials';

/**
 * readEnvio parses each DTE standalone and the envelope without them, instead of the whole file
 * and then every DTE again. Whatever way it takes, it must decide what a parse of the whole file
 * decides (well-formed or not), hand the same Carátula and Signature, and the verification read
 * from it must be the one read from the bytes alone.
 */
describe('readEnvio: the envelope read in parts decides as the whole parse', function () {
  let good: string;
  let dtes: string[];
  const ser = (n: unknown): string => new XMLSerializer().serializeToString(n as never);
  const wholeThrows = (text: string): boolean => {
    try {
      parseXml(text);
      return false;
    } catch {
      return true;
    }
  };
  const readThrows = (text: string): boolean => {
    try {
      readEnvio(text);
      return false;
    } catch {
      return true;
    }
  };
  const sameDecision = (text: string): void => {
    expect(readThrows(text), 'readEnvio throws exactly when the whole parse does').to.equal(
      wholeThrows(text),
    );
  };

  before(function () {
    const s = signedSampleEnvio([33, 33, 34, 56], 300);
    good = decodeXml(s.envio);
    dtes = s.dtes;
  });

  it('a signed envelope is read in parts: each DTE standalone, the Carátula and Signature as in the whole tree', function () {
    const parsed = readEnvio(good);
    expect(parsed.dtes, 'the fast way was taken').to.have.length(4);
    expect(parsed.dtes!.map((d) => d.text)).to.deep.equal(cutOutDtes(good));
    for (const d of parsed.dtes!) expect(ser(d.root)).to.equal(ser(parseXml(d.text).documentElement));
    const whole = parseXml(good).documentElement!;
    const part = parsed.document.documentElement!;
    const set = (r: typeof whole) => firstChild(r, 'SetDTE')!;
    expect(ser(firstChild(set(part), 'Caratula'))).to.equal(ser(firstChild(set(whole), 'Caratula')));
    expect(set(part).getAttribute('ID')).to.equal(set(whole).getAttribute('ID'));
    const sig = (r: typeof whole) => childElements(r).find((c) => c.localName === 'Signature');
    expect(ser(sig(part))).to.equal(ser(sig(whole)));
    // the standalone trees hold what the whole tree's DTE elements hold
    const inWhole = childElements(set(whole)).filter((c) => c.localName === 'DTE');
    expect(parsed.dtes!.map((d) => d.root.textContent)).to.deep.equal(inWhole.map((d) => d.textContent));
    expect(dtes).to.have.length(4);
  });

  it('verifyEnvioDte reads the same from readEnvio as from the bytes, genuine or tampered', function () {
    const sii = { '100': testCredentials().sii.publicKeyPem };
    const otherSii = { '100': createTestSiiKey(100).publicKeyPem };
    const tampered = good.replace(
      /<MntTotal>(\d+)<\/MntTotal>/,
      (_, n) => `<MntTotal>${Number(n) + 1}</MntTotal>`,
    );
    const resigned = good.replace('<RznSocRecep>', '<RznSocRecep>X');
    for (const text of [good, tampered, resigned]) {
      for (const keys of [sii, otherSii]) {
        const parsed = readEnvio(text);
        expect(parsed.dtes).to.have.length(4);
        const a = verifyEnvioDte(text, { siiPublicKeys: keys, parsed });
        const b = verifyEnvioDte(text, { siiPublicKeys: keys });
        expect(a).to.deep.equal(b);
      }
    }
    const v = verifyEnvioDte(good, { siiPublicKeys: sii, parsed: readEnvio(good) });
    expect(v.envelopeSignature.valid).to.equal(true);
    expect(v.documents.map((d) => [d.signatureValid, d.tedValid, d.cafSignatureValid])).to.deep.equal(
      Array(4).fill([true, true, true]),
    );
    const t = verifyEnvioDte(tampered, { siiPublicKeys: sii, parsed: readEnvio(tampered) });
    expect(t.envelopeSignature.valid).to.equal(false);
    expect(t.documents[0]?.signatureValid).to.equal(false);
    const o = verifyEnvioDte(good, { siiPublicKeys: otherSii, parsed: readEnvio(good) });
    expect(o.documents.map((d) => d.cafSignatureValid)).to.deep.equal([false, false, false, false]);
  });

  /** [what, the text]: each decided by readEnvio as by the whole parse */
  const cases = (): [string, string, 'parts' | 'whole'][] => {
    const [d0, d1] = cutOutDtes(good) as [string, string];
    const badDte = d0.replace(/<Folio>(\d+)<\/Folio>/, '<Folio>$1</Folo>');
    return [
      ['a DTE with a mismatched end tag', good.replace(d0, badDte), 'whole'],
      ['a DTE cut short', good.replace(d0, d0.slice(0, d0.length - 200) + '</DTE>'), 'whole'],
      [
        'a DTE inside a comment holding --',
        good.replace(d0, `<!-- ${d0.replace('<Folio>', '<Folio>--')} -->`),
        'whole',
      ],
      ['a DTE inside a comment', good.replace(d0, `<!-- ${d0} -->`), 'whole'],
      ['a DTE inside CDATA', good.replace(d0, `<![CDATA[${d0}]]>`), 'whole'],
      [
        'a DTE inside an attribute value',
        good.replace('<Caratula version="1.0">', `<Caratula version="1.0" x="${d0}">`),
        'whole',
      ],
      [
        'a DTE after a > in an attribute value',
        good.replace(`${d0}`, '').replace('<Caratula version="1.0">', `<Caratula version="1.0" x=">${d0}">`),
        'whole',
      ],
      [
        'a DTE using a prefix the envelope binds',
        good
          .replace('<EnvioDTE ', '<EnvioDTE xmlns:x="urn:x" ')
          .replace(d0, d0.replace('<Folio>', '<x:y/><Folio>')),
        'whole',
      ],
      ['a DTE using an unbound prefix', good.replace(d0, d0.replace('<Folio>', '<x:y/><Folio>')), 'whole'],
      [
        'a DTE using an attribute prefix the envelope binds',
        good
          .replace('<EnvioDTE ', '<EnvioDTE xmlns:x="urn:x" ')
          .replace(d0, d0.replace('<Folio>', '<Folio x:a="1">')),
        'whole',
      ],
      [
        'a DTE binding its own prefix, the envelope another',
        good
          .replace('<EnvioDTE ', '<EnvioDTE xmlns:x="urn:x" ')
          .replace(d0, d0.replace('<Folio>', '<x:y xmlns:x="urn:y" x:a="1"/><Folio>')),
        'parts',
      ],
      ['a DTE with an undefined entity', good.replace(d0, d0.replace('<Folio>', '<Folio>&nope;')), 'whole'],
      [
        'a DOCTYPE defining an entity a DTE uses',
        good
          .replace('<EnvioDTE ', '<!DOCTYPE EnvioDTE [<!ENTITY e "1">]><EnvioDTE ')
          .replace(d0, d0.replace('<Folio>', '<Folio>&e;')),
        'whole',
      ],
      ['a DTE holding ]]> in text', good.replace(d0, d0.replace('<Folio>', '<Folio>]]>')), 'parts'],
      [
        'a DTE holding a control character',
        good.replace(d0, d0.replace('<Folio>', '<Folio>\u0001')),
        'parts',
      ],
      ['a DTE nested in a DTE', good.replace(d1, d1.replace('<Folio>', '<Folio><DTE>1</DTE>')), 'whole'],
      ['a self-closing DTE beside the others', good.replace(d0, `${d0}<DTE/>`), 'parts'],
      ['the placeholder name in the file', good.replace(d0, `${d0}<DTE.ReadStandalone/>`), 'whole'],
      ['a broken Carátula', good.replace('</RutEnvia>', '</RutEnviaX>'), 'whole'],
      [
        'a broken envelope Signature',
        good.replace(/<\/SignatureValue>(?![\s\S]*<\/SignatureValue>)/, '</SignatureValu>'),
        'whole',
      ],
      ['text after the root', `${good}x`, 'whole'],
      ['a second root', `${good}<EnvioDTE/>`, 'whole'],
      ['a truncated file', good.slice(0, good.length - 40), 'whole'],
      ['a file cut inside a DTE', good.slice(0, good.indexOf(d1) + 100), 'whole'],
      ['no DTE at all', good.replace(/<DTE(?=[\s>])[\s\S]*?<\/DTE>/g, ''), 'whole'],
      ['a DTE outside SetDTE', good.replace(d0, '').replace('</SetDTE>', `</SetDTE>${d0}`), 'whole'],
      ['a DTE inside the Carátula', good.replace(d0, '').replace('</Caratula>', `${d0}</Caratula>`), 'whole'],
      ['not XML', 'hola', 'whole'],
      ['empty', '', 'whole'],
    ];
  };

  it('good and broken envelopes: the same decision (well-formed or not) either way', function () {
    const seen = new Set<string>();
    for (const [what, text, way] of cases()) {
      expect(text, what).not.to.equal(good);
      sameDecision(text);
      if (!readThrows(text)) {
        const parsed = readEnvio(text);
        // where the parts are not provably the whole, the whole file is parsed
        expect(parsed.dtes ? 'parts' : 'whole', what).to.equal(way);
        seen.add(`${wholeThrows(text)}`);
      } else seen.add('throws');
    }
    // the corpus holds both well-formed and broken files
    expect([...seen].sort()).to.deep.equal(['false', 'throws']);
  });
});
