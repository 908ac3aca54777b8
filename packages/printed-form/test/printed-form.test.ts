/**
 * The printed form as a person (and a scanner) sees it: documents of every type the engine signs
 * (33, 34, 46, 52, 56, 61, 110, 111, 112, with Latin-1 text and escaped characters), rendered,
 * rasterized by poppler at 300 dpi and read back: the PDF417 holds the TED of the signed XML
 * byte for byte (ISO-8859-1); pdftotext finds the folio, the RUTs and the totals.
 */
import { expect } from 'chai';
import {
  buildBoletaDocument,
  stampAndSignBoleta,
  stampAndSignDte,
  type DteDocument,
  type TipoDte,
} from '@dte/engine';
import { cafFor, testCredentials, today } from '../../dte-engine/test/support/credentials';
import { sampleDocument } from '../../dte-engine/test/support/documents';
import {
  ACUSE_LEGAL_TEXT,
  modelFromSignedXml,
  renderDraft,
  renderSignedDte,
  tedOf,
  timbreSymbol,
  TIMBRE_RULES,
} from '../src';
import { decodePdf417, pdfInfo, pdfText } from './support/pdf-oracles';
import { refusal } from '../../../test/support/refusal';

const COMPANY = { oficinaSii: 'SANTIAGO CENTRO', resolucion: { numero: 80, fecha: '2014-08-22' } };

function sign(doc: DteDocument): string {
  const tipo = doc.Encabezado.IdDoc.TipoDTE;
  return stampAndSignDte(doc, {
    caf: cafFor(tipo).caf,
    credential: testCredentials().credential,
    timestamp: new Date(),
  });
}

/** pdftotext may break words across columns; compare without whitespace. */
const squeeze = (s: string) => s.replace(/\s+/g, '');

describe('printed form (@dte/printed-form)', function () {
  this.timeout(120_000);

  const TIPOS: TipoDte[] = [33, 34, 46, 52, 56, 61, 110, 111, 112];
  for (const tipo of TIPOS) {
    it(`type ${tipo}: the PDF417 decodes to the signed TED byte for byte; folio, RUTs and totals are printed`, async () => {
      const folio = 40 + tipo;
      const xml = sign(sampleDocument(tipo, folio, today()));
      const pdf = await renderSignedDte(xml, COMPANY);
      expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
      const codes = decodePdf417(pdf);
      expect(codes, 'one PDF417 on the page').to.have.length(1);
      const ted = Buffer.from(tedOf(xml), 'latin1');
      // latin1 maps each byte to one character: equal strings are equal bytes
      expect(codes[0].toString('latin1')).to.equal(ted.toString('latin1'));
      expect(ted.toString('latin1')).to.match(/[^\x00-\x7f]/, 'the sample TED holds Latin-1 letters');
      expect(codes[0].subarray(0, 19).toString('latin1')).to.equal('<TED version="1.0">');

      const text = pdfText(pdf);
      const m = modelFromSignedXml(xml);
      expect(text).to.include(`N° ${folio}`);
      expect(text).to.include('R.U.T.: 76.192.083-9');
      expect(text).to.include('S.I.I. - SANTIAGO CENTRO');
      expect(text).to.include('Timbre Electrónico SII');
      expect(text).to.include('Res. N° 80 de 2014');
      expect(text).to.include('Verifique documento: www.sii.cl');
      // dates as a reader in Chile writes them (dd-mm-aaaa, @dte/es-cl), never the XML's ISO form
      const [y, mo, d] = m.fchEmis.split('-');
      expect(squeeze(text)).to.include(squeeze(`Fecha de emisión: ${d}-${mo}-${y}`));
      expect(text).to.not.include(m.fchEmis);
      const total = Number(m.totales.total).toLocaleString('de-DE');
      expect(squeeze(text)).to.include(squeeze(total));
      if (m.receptor.rut !== '55555555-5') expect(text).to.include('77.777.777-7');
      if (m.otraMoneda) {
        expect(text).to.include(m.totales.moneda!);
        expect(squeeze(text)).to.include(
          squeeze(`TOTAL CLP $ ${Number(m.otraMoneda.total).toLocaleString('de-DE')}`),
        );
      }
    });
  }

  it('the timbre keeps the SII dimensions: error level 5, within 4 x 9 cm, module at least 0.17 mm, rows 3 modules high', () => {
    const xml = sign(sampleDocument(33, 9, today()));
    const sym = timbreSymbol(tedOf(xml));
    expect(TIMBRE_RULES.errorCorrectionLevel).to.equal(5);
    expect(sym.widthMm).to.be.at.most(90).and.at.least(50);
    expect(sym.heightMm).to.be.at.most(40).and.at.least(20);
    expect(sym.moduleMm).to.be.at.least(0.17);
    expect(sym.heightMm / sym.rows / sym.moduleMm).to.be.closeTo(3, 1e-9);
  });

  it('the CEDIBLE copy of 33, 34 and 46 says CEDIBLE and carries the acuse de recibo; 52 says CEDIBLE CON SU FACTURA', async () => {
    for (const tipo of [33, 34, 46, 52] as const) {
      const xml = sign(sampleDocument(tipo, 60 + tipo, today()));
      const text = pdfText(await renderSignedDte(xml, { ...COMPANY, copy: 'cedible' }));
      expect(text).to.include(tipo === 52 ? 'CEDIBLE CON SU FACTURA' : 'CEDIBLE');
      expect(text).to.include('ACUSE DE RECIBO');
      for (const f of ['Nombre:', 'R.U.T.:', 'Fecha:', 'Recinto:', 'Firma:']) expect(text).to.include(f);
      expect(squeeze(text)).to.include(squeeze('Ley 19.983'));
      expect(squeeze(text)).to.include(squeeze(ACUSE_LEGAL_TEXT.slice(0, 40)));
      const original = pdfText(await renderSignedDte(xml, COMPANY));
      expect(original).not.to.include('CEDIBLE');
      expect(original).not.to.include('ACUSE DE RECIBO');
    }
    const nc = sign(sampleDocument(61, 77, today()));
    const err = await refusal(renderSignedDte(nc, { ...COMPANY, copy: 'cedible' }));
    expect(err.code).to.equal('validation_failed');
  });

  it('the 80 mm thermal layout is 80 mm wide and its PDF417 decodes to the TED', async () => {
    const xml = sign(sampleDocument(33, 12, today()));
    const pdf = await renderSignedDte(xml, { ...COMPANY, layout: 'thermal' });
    const info = pdfInfo(pdf);
    expect(info.pages).to.equal(1);
    expect(info.width).to.be.closeTo((80 / 25.4) * 72, 0.5);
    const codes = decodePdf417(pdf);
    expect(codes).to.have.length(1);
    expect(codes[0].toString('latin1')).to.equal(Buffer.from(tedOf(xml), 'latin1').toString('latin1'));
    expect(pdfText(pdf)).to.include('N° 12');
    const ced = await renderSignedDte(xml, { ...COMPANY, layout: 'thermal', copy: 'cedible' });
    const cedText = pdfText(ced);
    expect(cedText).to.include('CEDIBLE');
    expect(cedText).to.include('ACUSE DE RECIBO');
    expect(pdfInfo(ced).pages).to.equal(1);
    expect(decodePdf417(ced)).to.have.length(1);
  });

  it('long item descriptions wrap and paginate (Página n de m), the timbre on the last page decodes', async () => {
    const doc = sampleDocument(33, 13, today());
    const first = doc.Detalle[0];
    doc.Detalle = Array.from({ length: 40 }, (_, i) => ({
      ...first,
      NroLinDet: i + 1,
      NmbItem: i === 0 ? first.NmbItem : `Producto ${i + 1}`,
      DscItem: `Descripción larga del ítem ${i + 1}: ${'componente certificado con garantía extendida '.repeat(12)}FIN-${i + 1}`,
    }));
    const xml = sign(doc);
    const pdf = await renderSignedDte(xml, COMPANY);
    const info = pdfInfo(pdf);
    expect(info.pages).to.be.greaterThan(1);
    const text = pdfText(pdf);
    expect(text).to.include(`Página 1 de ${info.pages}`);
    expect(text).to.include(`Página ${info.pages} de ${info.pages}`);
    for (const i of [1, 20, 40]) expect(text).to.include(`FIN-${i}`);
    const codes = decodePdf417(pdf, { first: info.pages, last: info.pages });
    expect(codes).to.have.length(1);
    expect(codes[0].toString('latin1')).to.equal(Buffer.from(tedOf(xml), 'latin1').toString('latin1'));
  });

  it('41 items answer dte.print.items_limit (the spec: 40 printed items at most)', async () => {
    const doc = sampleDocument(33, 14, today());
    doc.Detalle = Array.from({ length: 41 }, (_, i) => ({ ...doc.Detalle[0], NroLinDet: i + 1 }));
    const err = await refusal(renderSignedDte(sign(doc), COMPANY));
    expect(err.code).to.equal('dte.print.items_limit');
    expect(err.detail).to.deep.include({ count: 41, max: 40 });
  });

  it('a part taller than a page answers dte.print.overflow', async () => {
    const doc = sampleDocument(33, 15, today());
    doc.Detalle[0] = { ...doc.Detalle[0], DscItem: 'línea muy larga '.repeat(800) };
    const err = await refusal(renderSignedDte(sign(doc), COMPANY));
    expect(err.code).to.equal('dte.print.overflow');
  });

  it('a draft says BORRADOR — SIN VALIDEZ TRIBUTARIA, shows no folio and carries no PDF417', async () => {
    const pdf = await renderDraft(sampleDocument(33, 1, today()), COMPANY);
    const text = pdfText(pdf);
    expect(text).to.include('BORRADOR — SIN VALIDEZ TRIBUTARIA');
    expect(text).not.to.match(/N° 1\b/);
    expect(decodePdf417(pdf)).to.have.length(0);
  });

  for (const tipo of [39, 41] as const) {
    for (const layout of ['thermal', 'letter'] as const) {
      it(`boleta ${tipo} (${layout}): the PDF417 is its signed TED; name, folio, items and total printed; no anonymous receptor`, async () => {
        const emisor = {
          rut: '76192083-9',
          razonSocial: 'COMERCIAL ÑANDÚ & COMPAÑÍA LIMITADA',
          giro: 'Venta al por menor',
          acteco: [471100],
          direccion: 'Av. Providencia 1234',
          comuna: 'Providencia',
        };
        const items =
          tipo === 39
            ? [
                {
                  nombre: 'Café en grano 1 kg',
                  cantidad: 2,
                  precio_unitario: 5990,
                  exento: false,
                  monto_item: 11980,
                },
                {
                  nombre: 'Libro de recetas',
                  cantidad: 1,
                  precio_unitario: 12000,
                  exento: true,
                  monto_item: 12000,
                },
              ]
            : [
                {
                  nombre: 'Clase de guitarra',
                  cantidad: 1,
                  precio_unitario: 15000,
                  exento: true,
                  monto_item: 15000,
                },
              ];
        const doc = buildBoletaDocument(
          { tipo_dte: tipo, rut_emisor: emisor.rut, fecha_emision: today(), items },
          { emisor, folio: 7 },
        );
        const xml = stampAndSignBoleta(doc, {
          caf: cafFor(tipo).caf,
          credential: testCredentials().credential,
          timestamp: new Date(),
        });
        const pdf = await renderSignedDte(xml, { ...COMPANY, copy: 'original', layout });
        const codes = decodePdf417(pdf);
        expect(codes).to.have.length(1);
        expect(codes[0]!.toString('latin1')).to.equal(Buffer.from(tedOf(xml), 'latin1').toString('latin1'));
        const text = pdfText(pdf);
        // the box may wrap the name: compared without whitespace
        expect(squeeze(text)).to.include(
          squeeze(tipo === 39 ? 'BOLETA ELECTRÓNICA' : 'BOLETA NO AFECTA O EXENTA ELECTRÓNICA'),
        );
        expect(text).to.include('N° 7');
        expect(text).to.include('R.U.T.: 76.192.083-9');
        expect(text).to.include('COMERCIAL ÑANDÚ & COMPAÑÍA LIMITADA');
        expect(text).to.include(items[0]!.nombre);
        expect(text).to.include('Timbre Electrónico SII');
        expect(squeeze(text)).to.include(squeeze(tipo === 39 ? 'TOTAL $ 23.980' : 'TOTAL $ 15.000'));
        if (tipo === 39) expect(squeeze(text)).to.include(squeeze('I.V.A. $ 1.913'));
        expect(text).to.not.include('66.666.666-6');
        if (layout === 'thermal') expect(pdfInfo(pdf).width).to.be.closeTo((80 / 25.4) * 72, 1);
      });
    }
  }
});
