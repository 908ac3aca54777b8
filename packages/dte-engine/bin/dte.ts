#!/usr/bin/env tsx
/**
 * dte — build, sign and verify EnvioDTE files from the command line (see README.md).
 *
 *   dte build --p12 cert.p12 --password PW --caf caf33.xml,caf61.xml --folios 33:10-12,61:5-5 \
 *             --emisor emisor.json docs/*.json -o envio.xml
 *   dte verify envio.xml [--sii-key 100=sii-pub.pem]
 *   dte fixtures --out dir [--rut-emisor 76192083-9] [--rut 12345678-5] [--tipos 33,61]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ServiceError, isServiceError } from '@dte/error-catalog';

import {
  Caf,
  EmisorProfile,
  TipoDte,
  buildDocument,
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  santiagoDate,
  stampAndSignDte,
  validateEmission,
  validateEnvioSchema,
  verifyDte,
  verifyEnvioDte,
  xmlRootName,
} from '../src';

const ALL_TIPOS: TipoDte[] = [33, 34, 46, 52, 56, 61, 110, 111, 112];

class UsageError extends Error {}

function list(value: string | string[] | undefined): string[] {
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** "33:10-12,61:5" → folios to hand out per type, in order. */
export function parseFolios(specs: string[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const spec of specs) {
    const m = /^(\d+):(\d+)(?:-(\d+))?$/.exec(spec);
    if (!m) throw new UsageError(`--folios ${spec}: expected TIPO:DESDE-HASTA, e.g. 33:10-12`);
    const tipo = Number(m[1]);
    const from = Number(m[2]);
    const to = Number(m[3] ?? m[2]);
    if (to < from) throw new UsageError(`--folios ${spec}: range is inverted`);
    const folios = out.get(tipo) ?? [];
    for (let f = from; f <= to; f++) folios.push(f);
    out.set(tipo, folios);
  }
  return out;
}

async function build(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      p12: { type: 'string' },
      password: { type: 'string' },
      caf: { type: 'string', multiple: true },
      folios: { type: 'string', multiple: true },
      emisor: { type: 'string' },
      'fch-resol': { type: 'string' },
      'nro-resol': { type: 'string' },
      'exchange-rate': { type: 'string' },
      now: { type: 'string' },
      'fecha-emision': { type: 'string' },
      out: { type: 'string', short: 'o' },
    },
  });
  if (!values.p12 || values.password === undefined || !values.caf || !values.folios || !values.emisor) {
    throw new UsageError('build needs --p12, --password, --caf, --folios and --emisor');
  }
  if (positionals.length === 0) throw new UsageError('build needs at least one document body (JSON file)');
  const now = values.now ? new Date(values.now) : new Date();
  if (Number.isNaN(now.getTime())) throw new UsageError(`--now ${values.now} is not a date`);
  const emisorFile = JSON.parse(readFileSync(values.emisor, 'utf8')) as EmisorProfile & {
    fchResol?: string;
    nroResol?: number;
  };
  const { fchResol: fileFchResol, nroResol: fileNroResol, ...emisor } = emisorFile;
  const fchResol = values['fch-resol'] ?? fileFchResol;
  const nroResol = values['nro-resol'] !== undefined ? Number(values['nro-resol']) : fileNroResol;
  if (!fchResol || nroResol === undefined) {
    throw new UsageError(
      'the resolution is needed: --fch-resol and --nro-resol, or fchResol/nroResol in emisor.json',
    );
  }
  const exchangeRate = values['exchange-rate'] !== undefined ? Number(values['exchange-rate']) : undefined;

  const credential = readP12(readFileSync(values.p12), values.password);
  const cafs: Caf[] = list(values.caf).map((f) => parseCaf(readFileSync(f), { now }));
  const folios = parseFolios(list(values.folios));

  const dtes = positionals.map((file) => {
    const body = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    // --fecha-emision fills only bodies that carry none ("today" = the date in Santiago)
    if (values['fecha-emision'] && body.fecha_emision === undefined) {
      body.fecha_emision = values['fecha-emision'] === 'today' ? santiagoDate(now) : values['fecha-emision'];
    }
    const input = validateEmission(body, { now, emisor, tipos: ALL_TIPOS });
    const tipo = input.tipo_dte;
    const folio = folios.get(tipo)?.shift();
    if (folio === undefined) {
      throw new ServiceError('caf_exhausted', `${file}: no folio left for type ${tipo} in --folios`, {
        detail: { tipoDte: tipo, file },
      });
    }
    const caf = cafs.find((c) => c.tipoDte === tipo && folio >= c.desde && folio <= c.hasta);
    if (!caf) {
      throw new ServiceError('caf_not_found', `${file}: no CAF of type ${tipo} covers folio ${folio}`, {
        detail: { tipoDte: tipo, folio },
      });
    }
    const doc = buildDocument(input, {
      emisor,
      folio,
      ...(exchangeRate !== undefined ? { exchangeRate } : {}),
    });
    process.stderr.write(
      `signed ${path.basename(file)}: type ${tipo} folio ${folio} total ${doc.Encabezado.Totales.MntTotal}\n`,
    );
    return stampAndSignDte(doc, { caf, credential, timestamp: now });
  });
  const envio = buildEnvioDte(dtes, {
    rutEmisor: emisor.rut,
    rutEnvia: credential.info.rut,
    fchResol,
    nroResol,
    credential,
    timestamp: now,
  });
  if (values.out) {
    writeFileSync(values.out, envio);
    process.stderr.write(`wrote ${values.out} (${dtes.length} DTE, ${envio.length} bytes)\n`);
  } else {
    process.stdout.write(envio);
  }
  return 0;
}

async function verify(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'sii-key': { type: 'string', multiple: true }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 1) throw new UsageError('verify takes one EnvioDTE or DTE file');
  const xml = readFileSync(positionals[0] as string);
  const siiPublicKeys: Record<string, string> = {};
  for (const spec of list(values['sii-key'])) {
    const m = /^(\d+)=(.+)$/.exec(spec);
    if (!m) throw new UsageError(`--sii-key ${spec}: expected IDK=file.pem`);
    siiPublicKeys[m[1] as string] = readFileSync(m[2] as string, 'utf8');
  }
  if (xmlRootName(xml) === 'DTE') return verifyLoneDte(xml, siiPublicKeys, values.json === true);
  const schema = await validateEnvioSchema(xml);
  const v = verifyEnvioDte(xml, Object.keys(siiPublicKeys).length ? { siiPublicKeys } : {});
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ schema, ...v }, null, 2)}\n`);
  } else {
    const mark = (ok: boolean | undefined): string => (ok ? 'ok' : 'FAIL');
    const c = v.caratula;
    console.log(`schema (EnvioDTE_v10.xsd)   ${mark(schema.valid)}`);
    for (const e of schema.errors) console.log(`  ${e}`);
    console.log(
      `caratula                    emisor ${c.rutEmisor}, envia ${c.rutEnvia}, receptor ${c.rutReceptor}, resolucion ${c.nroResol} del ${c.fchResol}`,
    );
    console.log(
      `envelope signature          ${mark(v.envelopeSignature.valid)}${v.envelopeSignature.error ? ` (${v.envelopeSignature.error})` : ''}` +
        `${v.envelopeSignature.certificate ? `  signer ${v.envelopeSignature.certificate.rut}` : ''}`,
    );
    for (const d of v.documents) {
      console.log(
        `${d.id.padEnd(12)} type ${d.tipoDte} folio ${d.folio} ${d.fchEmis} to ${d.rutReceptor} total ${d.mntTotal}`,
      );
      console.log(`  signature ${mark(d.signatureValid)}${d.signatureError ? ` (${d.signatureError})` : ''}`);
      console.log(
        `  TED       ${mark(d.tedValid)}${d.tedError ? ` (${d.tedError})` : ''}  CAF ${d.caf.desde}-${d.caf.hasta} IDK ${d.caf.idk}`,
      );
      console.log(`  totals    ${mark(d.totalsValid)}${d.totalsError ? ` (${d.totalsError})` : ''}`);
      if (d.cafSignatureValid !== undefined) {
        console.log(`  CAF FRMA  ${mark(d.cafSignatureValid)}${d.cafError ? ` (${d.cafError})` : ''}`);
      }
    }
  }
  const ok =
    schema.valid &&
    v.envelopeSignature.valid &&
    v.documents.every(
      (d) => d.signatureValid && d.tedValid && d.totalsValid && d.cafSignatureValid !== false,
    );
  return ok ? 0 : 1;
}

/** `dte verify` of a lone received DTE: its signature, TED, totals (and CAF FRMA with --sii-key). */
function verifyLoneDte(xml: Buffer, siiPublicKeys: Record<string, string>, json: boolean): number {
  const d = verifyDte(xml, Object.keys(siiPublicKeys).length ? { siiPublicKeys } : {});
  const ok = d.signatureValid && d.tedValid && d.totalsValid && d.cafSignatureValid !== false;
  if (json) {
    process.stdout.write(`${JSON.stringify({ kind: 'DTE', ...d }, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  const mark = (v: boolean | undefined): string => (v ? 'ok' : 'FAIL');
  console.log(
    `DTE ${d.id} type ${d.tipoDte} folio ${d.folio} ${d.fchEmis} from ${d.rutEmisor} to ${d.rutReceptor} total ${d.mntTotal}`,
  );
  console.log(`  signature ${mark(d.signatureValid)}${d.signatureError ? ` (${d.signatureError})` : ''}`);
  console.log(
    `  TED       ${mark(d.tedValid)}${d.tedError ? ` (${d.tedError})` : ''}  CAF ${d.caf.desde}-${d.caf.hasta} IDK ${d.caf.idk}`,
  );
  console.log(`  totals    ${mark(d.totalsValid)}${d.totalsError ? ` (${d.totalsError})` : ''}`);
  if (d.cafSignatureValid !== undefined)
    console.log(`  CAF FRMA  ${mark(d.cafSignatureValid)}${d.cafError ? ` (${d.cafError})` : ''}`);
  return ok ? 0 : 1;
}

async function fixtures(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      out: { type: 'string', short: 'o' },
      'rut-emisor': { type: 'string' },
      'razon-social': { type: 'string' },
      rut: { type: 'string' },
      password: { type: 'string' },
      tipos: { type: 'string' },
      desde: { type: 'string' },
      hasta: { type: 'string' },
      idk: { type: 'string' },
    },
  });
  const out = values.out ?? 'dte-fixtures';
  const rutEmisor = values['rut-emisor'] ?? '76192083-9';
  const razonSocial = values['razon-social'] ?? 'EMPRESA DE PRUEBA SPA';
  const rut = values.rut ?? '12345678-5';
  const password = values.password ?? 'test';
  const tipos = list(values.tipos ?? '33,34,46,52,56,61,110,111,112').map(Number);
  const desde = Number(values.desde ?? 1);
  const hasta = Number(values.hasta ?? 1000);
  mkdirSync(out, { recursive: true });
  const sii = createTestSiiKey(Number(values.idk ?? 100));
  writeFileSync(path.join(out, 'sii-key.pem'), sii.privateKeyPem);
  writeFileSync(path.join(out, 'sii-pub.pem'), sii.publicKeyPem);
  writeFileSync(path.join(out, 'sii-cert.pem'), sii.certificatePem);
  writeFileSync(path.join(out, 'cert.p12'), createTestP12({ rut, password }));
  const fechaAutorizacion = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(
    new Date(),
  );
  for (const tipoDte of tipos) {
    const caf = createTestCaf({
      siiKey: sii,
      rutEmisor,
      razonSocial,
      tipoDte,
      desde,
      hasta,
      fechaAutorizacion,
    });
    writeFileSync(path.join(out, `caf-${tipoDte}.xml`), caf, 'latin1');
  }
  const emisor = {
    rut: rutEmisor,
    razonSocial,
    giro: 'Servicios de prueba',
    acteco: [620200],
    direccion: 'Teatinos 120',
    comuna: 'Santiago',
    ciudad: 'Santiago',
    fchResol: '2014-08-22',
    nroResol: 0,
  };
  writeFileSync(path.join(out, 'emisor.json'), `${JSON.stringify(emisor, null, 2)}\n`);
  console.log(
    `wrote to ${out}/: cert.p12 (RUT ${rut}, password "${password}"), sii-key.pem, sii-pub.pem, sii-cert.pem (IDK ${sii.idk}),`,
  );
  console.log(
    `  emisor.json (${rutEmisor}), caf-<tipo>.xml for ${tipos.join(', ')} (folios ${desde}-${hasta})`,
  );
  return 0;
}

const USAGE = `usage:
  dte build --p12 FILE --password PW --caf CAF[,CAF…] --folios TIPO:DESDE-HASTA[,…] --emisor emisor.json
            [--fch-resol YYYY-MM-DD --nro-resol N] [--exchange-rate CLP] [--fecha-emision YYYY-MM-DD|today]
            [--now ISO] BODY.json… [-o envio.xml]
  dte verify envio.xml|dte.xml [--sii-key IDK=pub.pem] [--json]
  dte fixtures [--out DIR] [--rut-emisor RUT] [--rut RUT] [--password PW] [--tipos 33,61] [--desde N --hasta N]`;

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  try {
    switch (command) {
      case 'build':
        return await build(rest);
      case 'verify':
        return await verify(rest);
      case 'fixtures':
        return await fixtures(rest);
      default:
        throw new UsageError(command ? `unknown command ${command}` : 'no command');
    }
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
      return 2;
    }
    if (isServiceError(err)) {
      process.stderr.write(`error ${err.code}: ${err.message}\n`);
      if (err.issues) for (const i of err.issues) process.stderr.write(`  ${i.path}: ${i.message}\n`);
      if (err.detail) process.stderr.write(`  detail ${JSON.stringify(err.detail)}\n`);
      return 1;
    }
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  void main().then((code) => process.exit(code));
}
