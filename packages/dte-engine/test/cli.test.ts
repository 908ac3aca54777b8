import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import {
  EmisorProfile,
  computeTotals,
  cutOutDtes,
  parseCaf,
  santiagoDate,
  validateEmission,
  verifyEnvioDte,
} from '../src';
import {
  ENVELOPE_SIGNATURE,
  opensslVerifyTed,
  standaloneDte,
  xmllintSchema,
  xmlsecVerify,
} from './support/oracles';

/**
 * The `dte` command line end to end: fixtures, then emission bodies of every type through
 * validateEmission → buildDocument → stamp and sign → envelope, checked by xmllint, xmlsec1
 * (each DTE cut out, and the envelope) and openssl (TED); then `dte verify` on the result.
 */
const PKG = path.resolve(__dirname, '..');
const EXAMPLES = path.join(PKG, 'examples', 'docs');

function dte(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(PKG, 'bin', 'dte.ts'), ...args], {
    encoding: 'utf8',
    cwd: PKG,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dte CLI: fixtures, build from emission bodies, verify', function () {
  let dir: string;
  let envio: Buffer;
  const bodies = readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const folios = '33:10-12,34:1-5,46:1-5,52:1-5,56:1-5,61:1-5,110:1-5,111:1-5,112:1-5';
  const cafList = (): string =>
    readdirSync(dir)
      .filter((f) => f.startsWith('caf-'))
      .map((f) => path.join(dir, f))
      .join(',');
  const buildArgs = (): string[] => [
    'build',
    '--p12',
    path.join(dir, 'cert.p12'),
    '--password',
    'secreto',
    '--caf',
    cafList(),
    '--folios',
    folios,
    '--emisor',
    path.join(dir, 'emisor.json'),
    '--exchange-rate',
    '1012.3456',
    '--fecha-emision',
    'today',
  ];

  before(function () {
    dir = mkdtempSync(path.join(tmpdir(), 'dte-cli-'));
    const fx = dte([
      'fixtures',
      '--out',
      dir,
      '--rut-emisor',
      '76192083-9',
      '--rut',
      '12345678-5',
      '--password',
      'secreto',
    ]);
    expect(fx.status, fx.stderr).to.equal(0);
    const out = path.join(dir, 'envio.xml');
    const r = dte([...buildArgs(), ...bodies.map((b) => path.join(EXAMPLES, b)), '-o', out]);
    expect(r.status, r.stderr).to.equal(0);
    envio = readFileSync(out);
  });

  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds an EnvioDTE of every type that xmllint validates against EnvioDTE_v10.xsd', function () {
    const r = xmllintSchema(envio);
    expect(r.ok, r.output).to.equal(true);
    expect(cutOutDtes(envio.toString('latin1'))).to.have.length(bodies.length);
  });

  it('signs so that xmlsec1 verifies the envelope and every DTE cut out of it', function () {
    const env = xmlsecVerify(envio, ENVELOPE_SIGNATURE);
    expect(env.ok, env.output).to.equal(true);
    for (const d of cutOutDtes(envio.toString('latin1'))) {
      const r = xmlsecVerify(standaloneDte(d));
      expect(r.ok, `${d.slice(0, 120)}\n${r.output}`).to.equal(true);
    }
  });

  it('stamps TEDs that openssl verifies with each CAF public key', function () {
    for (const d of cutOutDtes(envio.toString('latin1'))) {
      const tipo = /<TipoDTE>(\d+)<\/TipoDTE>/.exec(d)?.[1] as string;
      const caf = parseCaf(readFileSync(path.join(dir, `caf-${tipo}.xml`)));
      const r = opensslVerifyTed(d, caf.rsaPublicKeyPem);
      expect(r.ok, `type ${tipo}: ${r.output}`).to.equal(true);
    }
  });

  it('writes the totals the input side computes from each body', function () {
    const emisor = JSON.parse(readFileSync(path.join(dir, 'emisor.json'), 'utf8')) as EmisorProfile;
    const now = new Date();
    const v = verifyEnvioDte(envio);
    for (const b of bodies) {
      const body = JSON.parse(readFileSync(path.join(EXAMPLES, b), 'utf8')) as Record<string, unknown>;
      body.fecha_emision ??= santiagoDate(now);
      const input = validateEmission(body, { now, emisor, tipos: [33, 34, 46, 52, 56, 61, 110, 111, 112] });
      const totals = computeTotals(input, { exchangeRate: 1012.3456 });
      const doc = v.documents.find((d) => d.tipoDte === input.tipo_dte);
      expect(doc?.mntTotal, b).to.equal(totals.montoTotal);
      expect(doc?.totalsValid, `${b}: ${doc?.totalsError}`).to.equal(true);
      // every example body, as the engine builds it, passes the SII's amount review
      expect(doc?.amountFindings, b).to.deep.equal([]);
    }
  });

  it('`dte verify` reports schema, signatures, TEDs, totals and CAF FRMA as ok (exit 0)', function () {
    const file = path.join(dir, 'envio.xml');
    const r = dte(['verify', file, '--sii-key', `100=${path.join(dir, 'sii-pub.pem')}`]);
    expect(r.status, r.stdout + r.stderr).to.equal(0);
    expect(r.stdout).to.match(/schema \(EnvioDTE_v10\.xsd\)\s+ok/);
    expect(r.stdout).to.match(/envelope signature\s+ok\s+signer 12345678-5/);
    expect(r.stdout.match(/signature ok/g)).to.have.length(bodies.length);
    expect(r.stdout.match(/TED {7}ok/g)).to.have.length(bodies.length);
    expect(r.stdout.match(/CAF FRMA {2}ok/g)).to.have.length(bodies.length);
  });

  it('`dte verify` exits 1 and names the failure for a tampered file', function () {
    const forged = path.join(dir, 'forged.xml');
    const text = envio
      .toString('latin1')
      .replace(/<MntTotal>(\d+)<\/MntTotal>/, (_m, n: string) => `<MntTotal>${Number(n) + 1}</MntTotal>`);
    writeFileSync(forged, Buffer.from(text, 'latin1'));
    const r = dte(['verify', forged]);
    expect(r.status).to.equal(1);
    expect(r.stdout).to.contain('signature FAIL');
    expect(r.stdout).to.match(/TED {7}FAIL \(TED DD\/MNT/);
  });

  it('answers the catalog code of a bad body, and caf_exhausted when --folios runs out', function () {
    const bad = path.join(dir, 'bad.json');
    const body = JSON.parse(readFileSync(path.join(EXAMPLES, '34-exenta.json'), 'utf8')) as {
      items: { monto_item: number }[];
    };
    (body.items[0] as { monto_item: number }).monto_item += 1;
    writeFileSync(bad, JSON.stringify(body));
    const r = dte([...buildArgs(), bad, '-o', path.join(dir, 'x.xml')]);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.match(/^error amount_arithmetic/m);
    const two = path.join(EXAMPLES, '33-factura.json');
    const args = buildArgs();
    args[args.indexOf(folios)] = '33:10-10';
    const ex = dte([...args, two, two, '-o', path.join(dir, 'y.xml')]);
    expect(ex.status).to.equal(1);
    expect(ex.stderr).to.match(/^error caf_exhausted/m);
  });
});
