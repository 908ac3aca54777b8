import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  santiagoDate,
  stampAndSignDte,
  verifyDte,
  xmlRootName,
  type DteDocument,
} from '../src';

/** A received DTE on its own (not inside an EnvioDTE): the engine and `dte verify` read it. */
describe('verifyDte and `dte verify` on a lone received DTE', function () {
  this.timeout(60_000);
  const siiKey = createTestSiiKey(100);
  const caf = parseCaf(
    createTestCaf({
      siiKey,
      rutEmisor: '96543210-8',
      razonSocial: 'PROVEEDOR SPA',
      tipoDte: 33,
      desde: 1,
      hasta: 10,
      fechaAutorizacion: santiagoDate(new Date(Date.now() - 86_400_000)),
      keyBits: 512,
    }),
  );
  const credential = readP12(createTestP12({ rut: '13579246-8', password: 'x' }), 'x');
  const doc: DteDocument = {
    Encabezado: {
      IdDoc: { TipoDTE: 33, Folio: 3, FchEmis: santiagoDate(new Date()) },
      Emisor: {
        RUTEmisor: '96543210-8',
        RznSoc: 'PROVEEDOR SPA',
        GiroEmis: 'Insumos',
        Acteco: [467300],
        DirOrigen: 'Av. Uno 100',
        CmnaOrigen: 'Santiago',
      },
      Receptor: {
        RUTRecep: '76086428-5',
        RznSocRecep: 'CLIENTE SPA',
        GiroRecep: 'Comercio',
        DirRecep: 'Calle 2',
        CmnaRecep: 'Providencia',
      },
      Totales: { MntNeto: 1000, TasaIVA: 19, IVA: 190, MntTotal: 1190 },
    },
    Detalle: [{ NroLinDet: 1, NmbItem: 'Insumo', QtyItem: 1, PrcItem: 1000, MontoItem: 1000 }],
  };
  const dte = stampAndSignDte(doc, { caf, credential, timestamp: new Date() });
  const file = Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${dte}`, 'latin1');
  const tampered = Buffer.from(
    file.toString('latin1').replace('<MntTotal>1190</MntTotal>', '<MntTotal>119</MntTotal>'),
    'latin1',
  );

  it('verifies signature, TED, totals and the CAF FRMA of a lone DTE', () => {
    expect(xmlRootName(file)).to.equal('DTE');
    const v = verifyDte(file, { siiPublicKeys: { '100': siiKey.publicKeyPem } });
    expect(v).to.include({
      tipoDte: 33,
      folio: 3,
      rutEmisor: '96543210-8',
      rutReceptor: '76086428-5',
      mntTotal: 1190,
    });
    expect([v.signatureValid, v.tedValid, v.totalsValid, v.cafSignatureValid]).to.deep.equal([
      true,
      true,
      true,
      true,
    ]);
    const t = verifyDte(tampered);
    expect(t.signatureValid).to.equal(false);
  });

  it('refuses what is not a lone DTE', () => {
    const envio = buildEnvioDte([dte], {
      rutEmisor: '96543210-8',
      rutEnvia: '13579246-8',
      fchResol: '2024-01-01',
      nroResol: 0,
      credential,
      timestamp: new Date(),
    });
    expect(() => verifyDte(envio)).to.throw(/not a DTE/);
  });

  it('`dte verify dte.xml` exits 0 for the DTE and 1 for a tampered one', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lone-dte-'));
    try {
      writeFileSync(path.join(dir, 'dte.xml'), file);
      writeFileSync(path.join(dir, 'bad.xml'), tampered);
      writeFileSync(path.join(dir, 'sii.pem'), siiKey.publicKeyPem);
      const run = (f: string) =>
        spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            path.resolve(__dirname, '..', 'bin', 'dte.ts'),
            'verify',
            path.join(dir, f),
            '--sii-key',
            `100=${path.join(dir, 'sii.pem')}`,
          ],
          {
            encoding: 'utf8',
          },
        );
      const ok = run('dte.xml');
      expect(ok.status, ok.stderr).to.equal(0);
      expect(ok.stdout).to.match(/signature ok/);
      expect(ok.stdout).to.match(/CAF FRMA\s+ok/);
      const bad = run('bad.xml');
      expect(bad.status).to.equal(1);
      expect(bad.stdout).to.match(/signature FAIL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
