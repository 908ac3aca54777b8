import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The independent tools the engine's output is checked with: xmllint (libxml2) against the
 * SII's XSD, xmlsec1 for the XML signatures, openssl for the TED and CAF signatures. Each call
 * writes its inputs to a fresh temporary directory.
 */
export const SCHEMAS =
  process.env.SII_SCHEMAS_DIR ?? path.resolve(__dirname, '../../../../../shared/sii/schemas');

export interface ToolResult {
  ok: boolean;
  output: string;
}

function inTmp<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'dte-oracle-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[]): ToolResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** xmllint against one of the SII's schemas (default the EnvioDTE's). */
export function xmllintSchema(xml: Buffer, schema = 'EnvioDTE_v10.xsd'): ToolResult {
  return inTmp((dir) => {
    const f = path.join(dir, 'envio.xml');
    writeFileSync(f, xml);
    return run('xmllint', ['--noout', '--schema', path.join(SCHEMAS, schema), f]);
  });
}

/**
 * xmlsec1 on the signature selected by `nodeXpath` (default: the first one in the document);
 * `idElements` names further elements whose ID attribute a Reference may point to.
 */
export function xmlsecVerify(
  xml: Buffer | string,
  nodeXpath?: string,
  idElements: string[] = [],
): ToolResult {
  return inTmp((dir) => {
    const f = path.join(dir, 'doc.xml');
    writeFileSync(f, xml);
    const args = [
      '--verify',
      '--id-attr:ID',
      'Documento',
      '--id-attr:ID',
      'Exportaciones',
      '--id-attr:ID',
      'SetDTE',
      ...idElements.flatMap((e) => ['--id-attr:ID', e]),
    ];
    if (nodeXpath) args.push('--node-xpath', nodeXpath);
    args.push(f);
    return run('xmlsec1', args);
  });
}

/** The envelope's own signature (last child of EnvioDTE), verified inside the whole envelope. */
export const ENVELOPE_SIGNATURE = "/*[local-name()='EnvioDTE']/*[local-name()='Signature']";

/** A DTE cut out of the envelope text, as a standalone ISO-8859-1 document. */
export function standaloneDte(dteText: string): Buffer {
  return Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${dteText}`, 'latin1');
}

/** openssl dgst -sha1 -verify: RSA-SHA1 signature (base64) over `data` with a PEM public key. */
export function opensslVerify(data: Buffer, signatureB64: string, publicKeyPem: string): ToolResult {
  return inTmp((dir) => {
    writeFileSync(path.join(dir, 'data.bin'), data);
    writeFileSync(path.join(dir, 'sig.bin'), Buffer.from(signatureB64.replace(/\s+/g, ''), 'base64'));
    writeFileSync(path.join(dir, 'key.pem'), publicKeyPem);
    return run('openssl', [
      'dgst',
      '-sha1',
      '-verify',
      path.join(dir, 'key.pem'),
      '-signature',
      path.join(dir, 'sig.bin'),
      path.join(dir, 'data.bin'),
    ]);
  });
}

/**
 * The TED check of PROTOCOL.md §8 done with text tools only: the DD as it appears in the DTE,
 * whitespace between tags removed, no namespace, ISO-8859-1; FRMT verified with openssl.
 */
export function opensslVerifyTed(dteText: string, cafPublicKeyPem: string): ToolResult {
  const dd = /<DD>[\s\S]*?<\/DD>/.exec(dteText)?.[0];
  const frmt = /<FRMT[^>]*>([^<]*)<\/FRMT>/.exec(dteText)?.[1];
  if (!dd || !frmt) return { ok: false, output: 'no DD/FRMT' };
  const flat = dd.replace(/>\s+</g, '><');
  return opensslVerify(Buffer.from(flat, 'latin1'), frmt, cafPublicKeyPem);
}

export function opensslAvailableLegacy(): boolean {
  try {
    execFileSync('openssl', ['list', '-providers', '-provider', 'legacy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
