import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

import { schemasDir, validateEnvioSchema } from '../src';
import { ResidentValidator } from '../src/schema-resident';
import { stopResidentSchemaValidator } from '../src/schema';
import { SIGNED_TYPES } from './support/documents';
import { signedSampleEnvio } from './support/envelopes';

/** What `xmllint --noout --nonet --schema <xsd> -` answers for a file: exit code and stderr. */
function xmllint(xsd: string, bytes: Buffer): { code: number; stderr: string } {
  const r = spawnSync('xmllint', ['--noout', '--nonet', '--schema', xsd, '-'], { input: bytes });
  return { code: r.status ?? -1, stderr: r.stderr.toString('utf8') };
}

function python3(): string {
  return execFileSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim();
}

/**
 * The resident validator keeps the compiled schemas between files: it must answer every file
 * exactly as a fresh xmllint process does — the same exit code and the same messages — whatever
 * came before it, and each answer must be the answer to its own file.
 */
describe('resident schema validator (schemas compiled once) answers as xmllint does', function () {
  const envioXsd = path.join(schemasDir(), 'EnvioDTE_v10.xsd');
  const boletaXsd = path.join(schemasDir(), 'EnvioBOLETA_v11.xsd');
  let valid: Buffer;
  let corpus: { name: string; xsd: string; bytes: Buffer }[];
  let validator: ResidentValidator;

  before(function () {
    valid = signedSampleEnvio(SIGNED_TYPES, 40).envio;
    const text = valid.toString('latin1');
    const edit = (from: string | RegExp, to: string) => Buffer.from(text.replace(from, to), 'latin1');
    corpus = [
      { name: 'valid envelope', xsd: envioXsd, bytes: valid },
      {
        name: 'value outside its type',
        xsd: envioXsd,
        bytes: edit('<NroResol>0</NroResol>', '<NroResol>x</NroResol>'),
      },
      { name: 'unexpected element', xsd: envioXsd, bytes: edit('<RutEnvia>', '<Otro/><RutEnvia>') },
      { name: 'missing element', xsd: envioXsd, bytes: edit(/<FchResol>[^<]*<\/FchResol>/, '') },
      {
        name: 'bad TipoDTE in every DTE',
        xsd: envioXsd,
        bytes: edit(/<TipoDTE>33<\/TipoDTE>/g, '<TipoDTE>X</TipoDTE>'),
      },
      { name: 'mismatched end tag', xsd: envioXsd, bytes: edit('</Caratula>', '</Caratul>') },
      { name: 'truncated', xsd: envioXsd, bytes: valid.subarray(0, valid.length - 40) },
      { name: 'not XML', xsd: envioXsd, bytes: Buffer.from('<EnvioDTE') },
      { name: 'empty', xsd: envioXsd, bytes: Buffer.alloc(0) },
      {
        name: 'declared UTF-8, Latin-1 bytes',
        xsd: envioXsd,
        bytes: Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<EnvioDTE>\xe9</EnvioDTE>', 'latin1'),
      },
      { name: 'undefined entity', xsd: envioXsd, bytes: Buffer.from('<EnvioDTE>&x;</EnvioDTE>') },
      {
        name: 'external DTD (no network)',
        xsd: envioXsd,
        bytes: Buffer.from(
          '<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE SYSTEM "http://127.0.0.1:9/x.dtd">\n<EnvioDTE/>',
        ),
      },
      {
        name: 'another root',
        xsd: envioXsd,
        bytes: Buffer.from('<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"/>'),
      },
      {
        name: 'the official F60T33 example',
        xsd: envioXsd,
        bytes: readFileSync(path.join(schemasDir(), '..', 'F60T33-official-example.xml')),
      },
      { name: 'EnvioDTE against EnvioBOLETA', xsd: boletaXsd, bytes: valid },
    ];
    validator = new ResidentValidator(python3());
  });

  after(function () {
    validator.close();
    stopResidentSchemaValidator();
  });

  it('gives xmllint exit code and messages for each file, byte for byte, before and after other files', async function () {
    const expected = corpus.map((c) => xmllint(c.xsd, c.bytes));
    // the corpus twice, so every file also comes after every other (compiled schemas reused)
    for (const round of [1, 2])
      for (const [i, c] of corpus.entries())
        expect(await validator.validate(c.xsd, c.bytes), `${c.name} (round ${round})`).to.deep.equal(
          expected[i],
        );
    // and the corpus really holds both verdicts, and files that are not even well-formed
    expect(new Set(expected.map((e) => e.code))).to.deep.equal(new Set([0, 1, 3]));
  });

  it('matches each answer to its own file when many are in flight at once', async function () {
    const expected = corpus.map((c) => xmllint(c.xsd, c.bytes));
    const order = Array.from({ length: 60 }, (_, k) => (k * 7) % corpus.length);
    const answers = await Promise.all(order.map((i) => validator.validate(corpus[i]!.xsd, corpus[i]!.bytes)));
    answers.forEach((a, k) => expect(a, corpus[order[k]!]!.name).to.deep.equal(expected[order[k]!]));
  });

  it('validateEnvioSchema gives the same verdict and errors with the resident engine as with xmllint processes', async function () {
    for (const c of corpus.filter((x) => x.xsd === envioXsd)) {
      const system = await validateEnvioSchema(c.bytes, { engine: 'system' });
      expect(await validateEnvioSchema(c.bytes, { engine: 'resident' }), c.name).to.deep.equal(system);
      expect(await validateEnvioSchema(c.bytes), `${c.name} (auto)`).to.deep.equal(system);
    }
  });

  it('when the resident process dies, the files it had not answered are judged by xmllint, and the next file starts a new one', async function () {
    const broken = corpus[1]!.bytes;
    const first = validateEnvioSchema(broken, { engine: 'resident' });
    const second = validateEnvioSchema(valid, { engine: 'resident' });
    stopResidentSchemaValidator(); // kills the child with both requests unanswered (or answered)
    const system = await validateEnvioSchema(broken, { engine: 'system' });
    expect(await first).to.deep.equal(system);
    expect(await second).to.deep.equal({ valid: true, errors: [] });
    expect(await validateEnvioSchema(broken, { engine: 'resident' })).to.deep.equal(system);
  });
});
