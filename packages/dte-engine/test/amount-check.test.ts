// The SII's amount review of a document (checkDocumentAmounts): each rule has a document that
// breaks it and is found, beside the same document with the figures right, which passes.
import { expect } from 'chai';
import type { Element } from '@xmldom/xmldom';

import { checkDocumentAmounts } from '../src';
import { parseXml } from '../src/xml/dom';

function documento(
  tipo: number,
  totales: string,
  detalles: string,
  extra = '',
  idDoc = '',
  tag = 'Documento',
): Element {
  const xml =
    `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><${tag} ID="T"><Encabezado>` +
    `<IdDoc><TipoDTE>${tipo}</TipoDTE><Folio>1</Folio><FchEmis>2026-11-27</FchEmis>${idDoc}</IdDoc>` +
    `<Totales>${totales}</Totales>${extra}</Encabezado>${detalles}</${tag}></DTE>`;
  const root = parseXml(xml).documentElement as unknown as Element;
  return root.getElementsByTagName(tag)[0] as unknown as Element;
}

const line = (n: number, qty: number, prc: number, monto: number, more = '') =>
  `<Detalle><NroLinDet>${n}</NroLinDet>${more.includes('IndExe') ? more : ''}<NmbItem>X</NmbItem>` +
  `<QtyItem>${qty}</QtyItem><PrcItem>${prc}</PrcItem>${more.includes('IndExe') ? '' : more}<MontoItem>${monto}</MontoItem></Detalle>`;

describe('checkDocumentAmounts: the SII amount review', function () {
  it('passes a factura whose lines, sums, VAT and total agree', function () {
    const d = documento(
      33,
      '<MntNeto>2500</MntNeto><MntExe>500</MntExe><TasaIVA>19</TasaIVA><IVA>475</IVA><MntTotal>3475</MntTotal>',
      line(1, 3, 1000, 2700, '<DescuentoPct>10</DescuentoPct><DescuentoMonto>300</DescuentoMonto>') +
        line(2, 1, 500, 500, '<IndExe>1</IndExe>') +
        `<DscRcgGlobal><NroLinDR>1</NroLinDR><TpoMov>D</TpoMov><TpoValor>$</TpoValor><ValorDR>200</ValorDR></DscRcgGlobal>`,
    );
    expect(checkDocumentAmounts(d)).to.deep.equal([]);
  });

  it('finds a line that is not price × quantity − discount: DET 200, a reparo (level 2)', function () {
    const d = documento(
      33,
      '<MntNeto>3500</MntNeto><TasaIVA>19</TasaIVA><IVA>665</IVA><MntTotal>4165</MntTotal>',
      line(1, 2, 1250, 3500),
    );
    expect(checkDocumentAmounts(d)).to.deep.equal([
      {
        seccion: 'DET',
        linea: 1,
        nivel: 2,
        codigo: 200,
        descripcion: 'Valor Detalle Distinto a Precio * Cantidad',
        detalle: '[3500] <> [2500]',
      },
      // the header agrees with the (wrong) line: only the line is found
    ]);
  });

  it('finds a total that is not the sum of its parts and a net that is not the lines: level 3', function () {
    const d = documento(
      33,
      '<MntNeto>1000</MntNeto><TasaIVA>19</TasaIVA><IVA>190</IVA><MntTotal>1290</MntTotal>',
      line(1, 1, 1100, 1100),
    );
    const f = checkDocumentAmounts(d);
    expect(f.map((x) => [x.seccion, x.nivel, x.codigo])).to.deep.equal([
      ['HED', 3, 101],
      ['HED', 3, 104],
    ]);
    expect(f[0]!.detalle).to.equal('[1000] <> [1100]');
  });

  it('finds a VAT that is not the rate of the net', function () {
    const d = documento(
      33,
      '<MntNeto>1000</MntNeto><TasaIVA>19</TasaIVA><IVA>180</IVA><MntTotal>1180</MntTotal>',
      line(1, 1, 1000, 1000),
    );
    expect(checkDocumentAmounts(d).map((x) => x.codigo)).to.deep.equal([103]);
  });

  it('reads a boleta 39 as gross: the taxable lines are MntNeto + IVA; a wrong split is found', function () {
    const ok = documento(
      39,
      '<MntNeto>2521</MntNeto><MntExe>7990</MntExe><IVA>479</IVA><MntTotal>10990</MntTotal>',
      line(1, 2, 1500, 3000) + line(2, 1, 7990, 7990, '<IndExe>1</IndExe>'),
    );
    expect(checkDocumentAmounts(ok)).to.deep.equal([]);
    const wrong = documento(
      39,
      '<MntNeto>2400</MntNeto><MntExe>7990</MntExe><IVA>479</IVA><MntTotal>10869</MntTotal>',
      line(1, 2, 1500, 3000) + line(2, 1, 7990, 7990, '<IndExe>1</IndExe>'),
    );
    expect(checkDocumentAmounts(wrong).map((x) => [x.seccion, x.codigo])).to.deep.equal([
      ['HED', 101],
      ['HED', 103],
    ]);
  });

  it('reads a boleta 41 as exempt and finds a total beyond its lines', function () {
    const d = documento(41, '<MntExe>5000</MntExe><MntTotal>5001</MntTotal>', line(1, 1, 5000, 5000));
    expect(checkDocumentAmounts(d).map((x) => [x.seccion, x.codigo])).to.deep.equal([['HED', 104]]);
  });

  it('checks an export in its currency, and its total restated in pesos', function () {
    const otra = (tot: number) =>
      `<OtraMoneda><TpoMoneda>PESO CL</TpoMoneda><TpoCambio>950.5</TpoCambio><MntTotOtrMnda>${tot}</MntTotOtrMnda></OtraMoneda>`;
    const ok = documento(
      110,
      '<TpoMoneda>DOLAR USA</TpoMoneda><MntExe>1234.56</MntExe><MntTotal>1234.56</MntTotal>',
      line(1, 3, 411.52, 1234.56, '<IndExe>1</IndExe>'),
      otra(1173449),
      '',
      'Exportaciones',
    );
    expect(checkDocumentAmounts(ok)).to.deep.equal([]);
    const bad = documento(
      110,
      '<TpoMoneda>DOLAR USA</TpoMoneda><MntExe>1234.56</MntExe><MntTotal>1234.56</MntTotal>',
      line(1, 3, 411.52, 1234.5, '<IndExe>1</IndExe>'),
      otra(1000000),
      '',
      'Exportaciones',
    );
    expect(checkDocumentAmounts(bad).map((x) => [x.seccion, x.codigo])).to.deep.equal([
      ['DET', 200],
      ['HED', 102],
      ['HED', 105],
    ]);
  });
});
