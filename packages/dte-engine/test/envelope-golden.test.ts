import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import {
  buildBoletaDocument,
  buildEnvioBoleta,
  buildEnvioDte,
  createTestP12,
  readP12,
  stampAndSignBoleta,
  stampAndSignDte,
  type BoletaInput,
  type EnvioOptions,
  type SigningCredential,
  type TipoDte,
} from '../src';
import { BOLETA_EMISOR, boleta39 } from './support/boletas';
import { cafFor, today } from './support/credentials';
import { EMISOR_RUT, RECEPTOR_RUT, sampleDocument } from './support/documents';

/**
 * Golden envelopes: EnvioDTE and EnvioBOLETA built from fixed inputs (a committed .p12, signed
 * documents, one timestamp) must come out byte for byte as the goldens, and every refusal with
 * the same code, message and detail. The goldens were written by the builders as they stood
 * before they shared one envelope builder (the refusals of a malformed boleta were then worded
 * as the EnvioDTE's: see the commit that changed them). `WRITE_ENVELOPE_GOLDENS=1` writes the
 * expected outcomes again from the committed inputs (only on purpose: a change of the envelope's
 * bytes or words); the inputs are made anew only when their file is missing.
 */
const DIR = path.join(__dirname, 'golden');
const INPUTS = path.join(DIR, 'envelope-inputs.json');
const EXPECTED = path.join(DIR, 'envelope-expected.json');
const WRITE = process.env.WRITE_ENVELOPE_GOLDENS === '1';

const SENDER = '12345678-5';
const PASSWORD = 'golden';
const TIMESTAMP = new Date('2026-11-27T15:04:05.000Z');

interface Inputs {
  /** the sender's .p12 (base64), valid 2020-2040 */
  p12: string;
  /** signed documents by name (Latin-1 text as JS strings) */
  documents: Record<string, string>;
}

type Outcome = { sha256: string; bytes: number } | { code: string; message: string; detail?: unknown };

/** Writes the fixed inputs: a certificate and signed documents of several types. */
function makeInputs(): Inputs {
  const p12 = createTestP12({
    rut: SENDER,
    name: 'María José Pérez',
    password: PASSWORD,
    notBefore: new Date('2020-01-01T00:00:00Z'),
    notAfter: new Date('2040-01-01T00:00:00Z'),
  });
  const credential = readP12(p12, PASSWORD);
  const documents: Record<string, string> = {};
  const tipos: [string, TipoDte, number][] = [
    ['f33', 33, 401],
    ['f33b', 33, 402],
    ['f34', 34, 403],
    ['nd56', 56, 404],
    ['nc61', 61, 405],
    ['fe110', 110, 406],
  ];
  for (const [name, tipo, folio] of tipos)
    documents[name] = stampAndSignDte(sampleDocument(tipo, folio, today()), {
      caf: cafFor(tipo).caf,
      credential,
      timestamp: TIMESTAMP,
    });
  const b41: BoletaInput = { ...boleta39(), tipo_dte: 41, items: [boleta39().items[1]!] };
  const boletas: [string, BoletaInput, number][] = [
    ['b39', boleta39(), 71],
    ['b39b', boleta39(), 72],
    ['b41', b41, 73],
  ];
  for (const [name, input, folio] of boletas)
    documents[name] = stampAndSignBoleta(buildBoletaDocument(input, { emisor: BOLETA_EMISOR, folio }), {
      caf: cafFor(input.tipo_dte).caf,
      credential,
      timestamp: TIMESTAMP,
    });
  return { p12: p12.toString('base64'), documents };
}

/** A document in another writer's form: prolog, byte-order mark, a comment, trailing space. */
const foreign = (dte: string): string =>
  `\uFEFF<?xml version="1.0" encoding="ISO-8859-1"?>\n${dte.replace('<Encabezado>', '<Encabezado><!-- nota -->')}\n  `;
/** An unsigned stand-in of type `tipo` (the builders check the head only). */
const fake = (tipo: number, emisor = EMISOR_RUT): string =>
  `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="F1T${tipo}"><Encabezado><IdDoc><TipoDTE>${tipo}</TipoDTE></IdDoc><Emisor><RUTEmisor>${emisor}</RUTEmisor></Emisor></Encabezado></Documento></DTE>`;

type Case = [name: string, build: (d: Record<string, string>, o: EnvioOptions) => Buffer];

function cases(): Case[] {
  const dte =
    (names: string[] | ((d: Record<string, string>) => string[]), over: Partial<EnvioOptions> = {}) =>
    (d: Record<string, string>, o: EnvioOptions) =>
      buildEnvioDte(typeof names === 'function' ? names(d) : names.map((n) => d[n]!), { ...o, ...over });
  const boleta =
    (names: string[] | ((d: Record<string, string>) => string[]), over: Partial<EnvioOptions> = {}) =>
    (d: Record<string, string>, o: EnvioOptions) =>
      buildEnvioBoleta(typeof names === 'function' ? names(d) : names.map((n) => d[n]!), { ...o, ...over });
  const both = (
    name: string,
    docs: (d: Record<string, string>) => string[],
    over: Partial<EnvioOptions>,
  ): Case[] => [
    [`dte ${name}`, dte(docs, over)],
    [`boleta ${name}`, boleta(docs, over)],
  ];
  return [
    // envelopes
    ['dte of five types, two of one type', dte(['nc61', 'f33', 'fe110', 'f34', 'nd56', 'f33b'])],
    [
      'dte intercambio: receptor, SetDTE ID, resolution',
      dte(['f33'], {
        rutReceptor: RECEPTOR_RUT,
        setId: 'EnvioIntercambio',
        fchResol: '2020-01-30',
        nroResol: 80,
      }),
    ],
    ['dte receptor written loosely', dte(['f33'], { rutReceptor: '77.777.777-7' })],
    ['dte of foreign text (the real canonicalizer)', dte((d) => [foreign(d.f33!), d.f34!])],
    ['dte ruts written loosely', dte(['f34'], { rutEmisor: '76.192.083-9', rutEnvia: '12.345.678-5' })],
    ['dte of 2000 (the bound)', dte(() => Array(2000).fill(fake(33)))],
    ['dte of 20 types (the bound)', dte(() => Array.from({ length: 20 }, (_, i) => fake(100 + i)))],
    ['boleta of 39 and 41', boleta(['b41', 'b39', 'b39b'])],
    ['boleta with its SetDTE ID and resolution', boleta(['b39'], { setId: 'SetBoletas', nroResol: 12 })],
    ['boleta of foreign text (the real canonicalizer)', boleta((d) => [foreign(d.b39!), d.b41!])],
    ['boleta of 500 (the bound)', boleta(() => Array(500).fill(fake(39)))],
    // refusals
    ...both('empty', () => [], {}),
    ['dte of 2001', dte(() => Array(2001).fill(fake(33)))],
    ['boleta of 501', boleta(() => Array(501).fill(fake(39)))],
    ['dte of 21 types', dte(() => Array.from({ length: 21 }, (_, i) => fake(100 + i)))],
    ...both('rutEmisor not a RUT', (d) => [d.b39!], { rutEmisor: 'x' }),
    ...both('rutEnvia not a RUT', (d) => [d.b39!], { rutEnvia: '12345678-0' }),
    ...both('rutEnvia not the holder', (d) => [d.b39!], { rutEnvia: '11111111-1' }),
    ...both('fchResol not a date', (d) => [d.b39!], { fchResol: '22-08-2014' }),
    ...both('nroResol negative', (d) => [d.b39!], { nroResol: -1 }),
    ...both('nroResol fractional', (d) => [d.b39!], { nroResol: 1.5 }),
    ...both('nroResol of 7 digits', (d) => [d.b39!], { nroResol: 1_000_000 }),
    ...both('setId not an XML ID', (d) => [d.b39!], { setId: '1set' }),
    ...both('certificate expired', (d) => [d.b39!], { timestamp: new Date('2041-01-01T00:00:00Z') }),
    ...both('certificate not yet valid', (d) => [d.b39!], { timestamp: new Date('2019-01-01T00:00:00Z') }),
    ...both('not a DTE', () => ['<Foo/>'], {}),
    ...both('DTE unclosed', () => [fake(39).replace('</DTE>', '')], {}),
    ...both(
      'DTE without its namespace',
      () => [fake(39).replace(' xmlns="http://www.sii.cl/SiiDte"', '')],
      {},
    ),
    ...both(
      'DTE with the namespace after version',
      () => [
        fake(39).replace(
          ' xmlns="http://www.sii.cl/SiiDte" version="1.0"',
          ' version="1.0" xmlns="http://www.sii.cl/SiiDte"',
        ),
      ],
      {},
    ),
    ...both('DTE without TipoDTE', () => [fake(39).replace(/<IdDoc>.*<\/IdDoc>/, '')], {}),
    ...both('DTE without RUTEmisor', () => [fake(39).replace(/<Emisor>.*<\/Emisor>/, '')], {}),
    ...both('DTE of another issuer', () => [fake(39, '96543210-8')], {}),
    ...both('factura among boletas', (d) => [d.b39!, d.f33!], {}),
    ...both('text outside Latin-1', () => [fake(39).replace('<IdDoc>', '<IdDoc><!-- ✓ -->')], {}),
    ...both('DTEs that are not well-formed', () => [fake(39).replace('<IdDoc>', '<IdDoc><x>')], {}),
  ];
}

function outcome(build: () => Buffer): Outcome {
  try {
    const xml = build();
    return { sha256: createHash('sha256').update(xml).digest('hex'), bytes: xml.length };
  } catch (err) {
    const e = err as Error & { code?: string; detail?: unknown };
    return {
      code: e.code ?? e.name,
      message: e.message,
      ...(e.detail !== undefined ? { detail: e.detail } : {}),
    };
  }
}

describe('envelope goldens: EnvioDTE and EnvioBOLETA byte for byte, refusals word for word', function () {
  let inputs: Inputs;
  let credential: SigningCredential;
  let expected: Record<string, Outcome>;

  before(function () {
    if (WRITE && !existsSync(INPUTS)) {
      mkdirSync(DIR, { recursive: true });
      writeFileSync(INPUTS, `${JSON.stringify(makeInputs(), null, 2)}\n`);
    }
    inputs = JSON.parse(readFileSync(INPUTS, 'utf8')) as Inputs;
    credential = readP12(Buffer.from(inputs.p12, 'base64'), PASSWORD);
    if (WRITE) {
      const written: Record<string, Outcome> = {};
      for (const [name, build] of cases()) written[name] = outcome(() => build(inputs.documents, opts()));
      writeFileSync(EXPECTED, `${JSON.stringify(written, null, 2)}\n`);
    }
    expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, Outcome>;
  });

  const opts = (): EnvioOptions => ({
    rutEmisor: EMISOR_RUT,
    rutEnvia: SENDER,
    fchResol: '2014-08-22',
    nroResol: 0,
    credential,
    timestamp: TIMESTAMP,
  });

  it('has a golden for every case and a case for every golden', function () {
    expect(Object.keys(expected).sort()).to.deep.equal(
      cases()
        .map(([n]) => n)
        .sort(),
    );
  });

  for (const [name, build] of cases()) {
    it(name, function () {
      const got = outcome(() => build(inputs.documents, opts()));
      if ('sha256' in got && JSON.stringify(got) !== JSON.stringify(expected[name])) {
        // the bytes, to compare with what the builders wrote before (git stash, run, diff)
        const out = path.join(tmpdir(), `envelope-golden-${name.replace(/\W+/g, '-')}.xml`);
        writeFileSync(out, build(inputs.documents, opts()));
        expect.fail(`${name}: bytes differ from the golden (this run's envelope: ${out})`);
      }
      expect(got).to.deep.equal(expected[name]);
    });
  }
});
