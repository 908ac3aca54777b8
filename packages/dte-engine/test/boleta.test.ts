import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import {
  buildBoletaDocument,
  buildEnvioBoleta,
  cutOutDtes,
  DOCUMENT_FOLIO_PATH,
  stampAndSignBoleta,
  validateEnvioSchema,
  verifyEnvioDte,
  type BoletaInput,
} from '../src';
import { BOLETA_EMISOR as EMISOR, boleta39 } from './support/boletas';
import { cafFor, SENDER_RUT, testCredentials, today } from './support/credentials';
import { EMISOR_RUT } from './support/documents';
import { opensslVerifyTed, SCHEMAS, standaloneDte, xmlsecVerify } from './support/oracles';

/** xmllint (libxml2's binary) against the official EnvioBOLETA_v11.xsd. */
function xmllintBoleta(xml: Buffer): { ok: boolean; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'boleta-'));
  try {
    const f = path.join(dir, 'envio.xml');
    writeFileSync(f, xml);
    const r = spawnSync('xmllint', ['--noout', '--schema', path.join(SCHEMAS, 'EnvioBOLETA_v11.xsd'), f], {
      encoding: 'utf8',
    });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('boletas 39/41: totals, XML, TED and signature against EnvioBOLETA_v11.xsd', function () {
  it('derives the totals from gross items (neto = round(taxable / 1.19), exempt whole) and ignores declared ones', function () {
    const doc = buildBoletaDocument({ ...boleta39(), monto_total: 1, iva: 999 } as BoletaInput, {
      emisor: EMISOR,
      folio: 1,
    });
    // taxable 11980 + 1000 = 12980; 12980 / 1.19 = 10907.56 -> 10908; iva 2072; exempt 12000
    expect(doc.Encabezado.Totales).to.deep.equal({
      MntNeto: 10908,
      MntExe: 12000,
      IVA: 2072,
      MntTotal: 24980,
    });
    expect(doc.Encabezado.Receptor.RUTRecep).to.equal('66666666-6');
  });

  it('holds its folio at DOCUMENT_FOLIO_PATH alone, as a DTE: a folio-0 draft with that path set is the boleta built with the folio', function () {
    const exenta: BoletaInput = {
      ...boleta39(),
      tipo_dte: 41,
      items: [{ nombre: 'Libro', cantidad: 1, precio_unitario: 12000, exento: true, monto_item: 12000 }],
    };
    for (const input of [boleta39(), exenta]) {
      const draft = JSON.parse(
        JSON.stringify(buildBoletaDocument(input, { emisor: EMISOR, folio: 0 })),
      ) as Record<string, unknown>;
      const direct = buildBoletaDocument(input, { emisor: EMISOR, folio: 4711 });
      let node = draft;
      for (const k of DOCUMENT_FOLIO_PATH.slice(0, -1)) node = node[k] as Record<string, unknown>;
      expect(node[DOCUMENT_FOLIO_PATH.at(-1)!], `type ${input.tipo_dte}: the draft's folio`).to.equal(0);
      node[DOCUMENT_FOLIO_PATH.at(-1)!] = 4711;
      expect(draft, `type ${input.tipo_dte}`).to.deep.equal(JSON.parse(JSON.stringify(direct)));
    }
  });

  it('rejects a 41 with a taxable item (dte.41.afecto_not_allowed) and a monto_item that disagrees (amount_arithmetic)', function () {
    expect(() => buildBoletaDocument({ ...boleta39(), tipo_dte: 41 }, { emisor: EMISOR, folio: 1 }))
      .to.throw()
      .with.property('code', 'dte.41.afecto_not_allowed');
    const bad = boleta39();
    bad.items[0]!.monto_item = 11981;
    expect(() => buildBoletaDocument(bad, { emisor: EMISOR, folio: 1 }))
      .to.throw()
      .that.satisfies((e: { code: string; detail: { expected: number } }) => {
        return e.code === 'amount_arithmetic' && e.detail.expected === 11980;
      });
  });

  describe('an EnvioBOLETA of 39 and 41', function () {
    let envio: Buffer;
    let dtes: string[];
    before(function () {
      const { credential } = testCredentials();
      const timestamp = new Date();
      const b41: BoletaInput = {
        tipo_dte: 41,
        rut_emisor: EMISOR_RUT,
        rut_receptor: '11111111-1',
        razon_social_receptor: 'Juana Pérez',
        fecha_emision: today(),
        items: [
          { nombre: 'Clase de música', cantidad: 1, precio_unitario: 25000, exento: true, monto_item: 25000 },
        ],
      };
      dtes = [
        stampAndSignBoleta(buildBoletaDocument(boleta39(), { emisor: EMISOR, folio: 7 }), {
          caf: cafFor(39).caf,
          credential,
          timestamp,
        }),
        stampAndSignBoleta(buildBoletaDocument(b41, { emisor: EMISOR, folio: 3 }), {
          caf: cafFor(41).caf,
          credential,
          timestamp,
        }),
      ];
      envio = buildEnvioBoleta(dtes, {
        rutEmisor: EMISOR_RUT,
        rutEnvia: SENDER_RUT,
        fchResol: '2014-08-22',
        nroResol: 0,
        credential,
        timestamp,
      });
    });

    it('passes the official schema with the xmllint binary and with the engine check (every engine)', async function () {
      const r = xmllintBoleta(envio);
      expect(r.ok, r.output).to.equal(true);
      for (const engine of ['system', 'wasm', 'resident'] as const)
        expect(await validateEnvioSchema(envio, { engine, schema: 'EnvioBOLETA' })).to.deep.equal({
          valid: true,
          errors: [],
        });
      // and the EnvioDTE schema does not take it (a different root)
      expect((await validateEnvioSchema(envio, { engine: 'system' })).valid).to.equal(false);
    });

    it('a broken boleta fails the schema (IndServicio out of its enumeration)', function () {
      const broken = Buffer.from(
        envio.toString('latin1').replace('<IndServicio>3</IndServicio>', '<IndServicio>9</IndServicio>'),
        'latin1',
      );
      const r = xmllintBoleta(broken);
      expect(r.ok).to.equal(false);
      expect(r.output).to.match(/IndServicio/);
    });

    it('carries signatures xmlsec1 verifies (envelope and each boleta cut out) and TEDs openssl verifies', function () {
      const env = xmlsecVerify(envio, "/*[local-name()='EnvioBOLETA']/*[local-name()='Signature']");
      expect(env.ok, env.output).to.equal(true);
      const cut = cutOutDtes(envio.toString('latin1'));
      expect(cut).to.have.length(2);
      for (const [i, d] of cut.entries()) {
        const r = xmlsecVerify(standaloneDte(d));
        expect(r.ok, r.output).to.equal(true);
        const ted = opensslVerifyTed(d, cafFor(i === 0 ? 39 : 41).caf.rsaPublicKeyPem);
        expect(ted.ok, ted.output).to.equal(true);
      }
      const v = verifyEnvioDte(envio, { siiPublicKeys: { '100': testCredentials().sii.publicKeyPem } });
      expect(v.envelopeSignature.valid).to.equal(true);
      expect(
        v.documents.map((d) => [
          d.tipoDte,
          d.folio,
          d.signatureValid,
          d.tedValid,
          d.totalsValid,
          d.amountFindings.length,
        ]),
      ).to.deep.equal([
        [39, 7, true, true, true, 0],
        [41, 3, true, true, true, 0],
      ]);
    });

    it('refuses more than 500 boletas in one envelope (the XSD bound)', function () {
      const { credential } = testCredentials();
      expect(() =>
        buildEnvioBoleta(Array(501).fill(dtes[0]), {
          rutEmisor: EMISOR_RUT,
          rutEnvia: SENDER_RUT,
          fchResol: '2014-08-22',
          nroResol: 0,
          credential,
          timestamp: new Date(),
        }),
      ).to.throw(/at most 500/);
    });
  });
});
