import { expect } from 'chai';
import { buildDocument, replaceTypographic, validateEmission } from '../../src/input';
import { EMISOR, RECEPTOR, caught, ctx, factura } from './fixtures';

const item = (nombre: string, extra: Record<string, unknown> = {}) => ({
  nombre,
  cantidad: 1,
  precio_unitario: 1000,
  exento: false,
  monto_item: 1000,
  ...extra,
});

describe('input: ISO-8859-1 texts', () => {
  it('accents, Ñ, º, « » and the like go through unchanged', () => {
    const name = 'Ñandú ÁÉÍÓÚ äöü ç º ª « » ¿¡ ½ ©';
    const input = validateEmission(factura({ items: [item(name)] }), ctx());
    expect(buildDocument(input, { emisor: EMISOR, folio: 1 }).Detalle[0].NmbItem).to.equal(name);
  });

  it('typographic dashes, curly quotes, ellipsis and zero-width spaces are replaced', () => {
    const sent =
      'Tubo \u201cPVC\u201d \u2013 3\u20444'.replace('\u2044', '/') + ' l\u2019agua\u2026 fin\u200b\u2014x';
    expect(replaceTypographic(sent)).to.equal('Tubo "PVC" - 3/4 l\'agua... fin-x');
    const input = validateEmission(
      factura({
        items: [item(sent)],
        receptor: { ...RECEPTOR, razon_social: '\u2018Los Pinos\u2019 \u2012 Ltda.\ufeff' },
      }),
      ctx(),
    );
    // what is stored is what goes to the XML
    expect(input.items[0].nombre).to.equal('Tubo "PVC" - 3/4 l\'agua... fin-x');
    const doc = buildDocument(input, { emisor: EMISOR, folio: 1 });
    expect(doc.Detalle[0].NmbItem).to.equal('Tubo "PVC" - 3/4 l\'agua... fin-x');
    expect(doc.Encabezado.Receptor.RznSocRecep).to.equal("'Los Pinos' - Ltda.");
  });

  it('other characters answer dte.field_not_latin1 with field, element, char, codepoint and index', () => {
    const err = caught(() =>
      validateEmission(factura({ items: [item('ok'), item('Caf\u00e9 \u2615 ok')] }), ctx()),
    );
    expect(err.code).to.equal('dte.field_not_latin1');
    expect(err.detail).to.deep.equal({
      field: 'items[1].nombre',
      element: 'NmbItem',
      char: '\u2615',
      codepoint: 'U+2615',
      index: 5,
    });
    // emoji outside the BMP: index counts characters, not UTF-16 units
    const e2 = caught(() =>
      validateEmission(factura({ receptor: { ...RECEPTOR, giro: 'A\u{1F600}B\u20ac' } }), ctx()),
    );
    expect(e2.detail).to.deep.equal({
      field: 'receptor.giro',
      element: 'GiroRecep',
      char: '\u{1F600}',
      codepoint: 'U+1F600',
      index: 1,
    });
    const e3 = caught(() =>
      validateEmission(
        factura({
          descuento_global: [{ tipo: 'descuento', es_porcentaje: true, valor: 1, glosa: 'Promo \u20ac' }],
        }),
        ctx(),
      ),
    );
    expect(e3.detail).to.include({
      field: 'descuento_global[0].glosa',
      element: 'GlosaDR',
      codepoint: 'U+20AC',
    });
  });

  it('control characters are refused too (not XML text)', () => {
    const err = caught(() => validateEmission(factura({ items: [item('a\u0007b')] }), ctx()));
    expect(err.code).to.equal('dte.field_not_latin1');
    expect(err.detail).to.include({ codepoint: 'U+0007', index: 1 });
  });

  it('dte.field_too_long when a replacement makes the text exceed its XML element', () => {
    // 98 characters + an ellipsis: 99 within the API bound (100), 101 once written as "..."
    const name = 'x'.repeat(98) + '\u2026';
    const err = caught(() =>
      validateEmission(factura({ receptor: { ...RECEPTOR, razon_social: name } }), ctx()),
    );
    expect(err.code).to.equal('dte.field_too_long');
    expect(err.detail).to.deep.equal({
      field: 'receptor.razon_social',
      element: 'RznSocRecep',
      maxLength: 100,
      actualLength: 101,
    });
    // the API bound applies to the text as sent; zero-width spaces then shrink it: 80 sent, 79 written
    const ok = validateEmission(factura({ items: [item('y'.repeat(78) + '\u200b' + 'z')] }), ctx());
    expect(ok.items[0].nombre).to.have.length(79);
  });

  it('dte.field_too_long for XML elements shorter than the API bound', () => {
    // FolioRef holds 18 characters; the API admits any digits string
    const folio = '1234567890123456789';
    const e1 = caught(() =>
      validateEmission(
        factura({
          references: [{ line_num: 1, tipo_doc_ref: 801, folio_ref: folio, fecha_ref: '2026-03-01' }],
        }),
        ctx(),
      ),
    );
    expect(e1.code).to.equal('dte.field_too_long');
    expect(e1.detail).to.deep.equal({
      field: 'references[0].folio_ref',
      element: 'FolioRef',
      maxLength: 18,
      actualLength: 19,
    });
    // Nacionalidad holds 3 digits; the API admits any integer > 0
    const e2 = caught(() =>
      validateEmission(
        {
          tipo_dte: 110,
          receptor: { razon_social: 'ACME', extranjero: { nacionalidad: 1234 } },
          items: [{ nombre: 'V', cantidad: 1, precio_unitario: 1, monto_item: 1 }],
          tpo_moneda: 'PESO CL',
          monto_total: 1,
        },
        ctx(),
      ),
    );
    expect(e2.detail).to.deep.equal({
      field: 'receptor.extranjero.nacionalidad',
      element: 'Nacionalidad',
      maxLength: 3,
      actualLength: 4,
    });
    // PesoBruto holds 10 digits (8 integer + 2 decimals); the API admits any number >= 0
    const e4 = caught(() =>
      validateEmission(
        {
          tipo_dte: 110,
          receptor: { razon_social: 'ACME' },
          items: [{ nombre: 'V', cantidad: 1, precio_unitario: 1, monto_item: 1 }],
          tpo_moneda: 'PESO CL',
          monto_total: 1,
          aduana: { peso_bruto: 123456789.25 },
        },
        ctx(),
      ),
    );
    expect(e4.detail).to.deep.equal({
      field: 'aduana.peso_bruto',
      element: 'PesoBruto',
      maxLength: 10,
      actualLength: 11,
    });
    // texts of the company profile are checked against RznSoc (100) as well
    const e3 = caught(() =>
      validateEmission(factura(), { now: ctx().now, emisor: { ...EMISOR, razonSocial: 'r'.repeat(101) } }),
    );
    expect(e3.detail).to.include({
      field: 'emisor_profile.razonSocial',
      element: 'RznSoc',
      actualLength: 101,
    });
  });
});
