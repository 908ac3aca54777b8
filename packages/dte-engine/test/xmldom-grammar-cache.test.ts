import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { expect } from 'chai';

import {
  installXmldomGrammarCache,
  uninstallXmldomGrammarCache,
  xmldomGrammarCacheInstalled,
} from '../src/xml/xmldom-grammar-cache';
import { signedSampleEnvio } from './support/envelopes';

/** What a parse decides: the tree it builds (serialized) and every error or warning it reports. */
function parseOutcome(text: string): { tree: string | null; reports: string[]; thrown: string | null } {
  const reports: string[] = [];
  const parser = new DOMParser({ onError: (level, msg) => reports.push(`${level}: ${String(msg)}`) });
  try {
    const doc = parser.parseFromString(text, 'text/xml');
    return { tree: new XMLSerializer().serializeToString(doc), reports, thrown: null };
  } catch (err) {
    return { tree: null, reports, thrown: (err as Error).message };
  }
}

/** End tags are what the cached RegExps judge: good ones, and every way of getting one wrong. */
const END_TAG_CASES = [
  '<a><b>x</b></a>',
  '<a></a >',
  '<a></a\t\n>',
  '<a></b>',
  '<a><b></a></b>',
  '<a></a\nx>',
  '<a></a x>',
  '<a></ a>',
  '<a></1a>',
  '<a></a',
  '<a></>',
  '<a>x</a:b>',
  '<p:a xmlns:p="urn:x"></p:a>',
  '<p:a xmlns:p="urn:x"></q:a>',
  '<p:a xmlns:p="urn:x"></p:>',
  '<é><ñandú/></é>',
  '<é></e>',
  '<a>&amp;</a><b/>',
  '<!DOCTYPE a [<!ELEMENT a ANY><!-- c -->]><a><![CDATA[</a>]]></a>',
  '<a><!-- </a> --></a>',
  '<?xml version="1.0" encoding="ISO-8859-1"?><a></a>trailing',
];

describe('xmldom grammar cache (end-tag RegExps built once)', function () {
  let envelope: string;

  before(function () {
    envelope = signedSampleEnvio([33, 33], 20, '2024-03-01').envio.toString('latin1');
  });

  after(function () {
    installXmldomGrammarCache();
  });

  it('is installed by the engine for every xmldom parse in the process', function () {
    expect(xmldomGrammarCacheInstalled()).to.equal(true);
  });

  it('gives the same trees and the same errors as xmldom as published, for good and malformed end tags', function () {
    const inputs = [envelope, envelope.replace('</SetDTE>', '</SetDTe>'), ...END_TAG_CASES];
    // each input twice with the cache: the second parse uses RegExps the first one cached
    installXmldomGrammarCache();
    const cached = inputs.map((t) => [parseOutcome(t), parseOutcome(t)]);
    uninstallXmldomGrammarCache();
    const published = inputs.map((t) => parseOutcome(t));
    installXmldomGrammarCache();
    inputs.forEach((t, i) => {
      expect(cached[i]![0], t.slice(0, 80)).to.deep.equal(published[i]);
      expect(cached[i]![1], t.slice(0, 80)).to.deep.equal(published[i]);
    });
    // the malformed ones really are refused (the comparison is not between two lenient parsers)
    const refused = (t: string) => {
      const o = parseOutcome(t);
      return o.thrown !== null || o.reports.some((r) => !r.startsWith('warning'));
    };
    expect(refused('<a></b>')).to.equal(true);
    expect(refused('<a></a\nx>')).to.equal(true);
    expect(refused('<a></1a>')).to.equal(true);
    expect(refused(inputs[1]!)).to.equal(true);
    expect(refused(envelope)).to.equal(false);
  });
});
