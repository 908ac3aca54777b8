import { expect } from 'chai';
import { buildDocument, computeTotals, validateEmission, type EmissionInput } from '../../src/input';
import { EMISOR, RECEPTOR, ctx, factura } from './fixtures';

/**
 * Totals of every type against values computed by hand from the SII rules (the arithmetic is
 * written beside each expected value): MontoItem = QtyItem*PrcItem - round(QtyItem*PrcItem*
 * DescuentoPct/100), rounded to whole pesos half away from zero; global percentages over the
 * sum of the items they concern; IVA = round(MntNeto*19/100); MntTotal = MntNeto + MntExe + IVA
 * - IVA retenido. Each body also declares the hand values, so validateEmission's own arithmetic
 * check has to agree with them too.
 */
function build(body: Record<string, unknown>, options: { exchangeRate?: number; tipos?: number[] } = {}) {
  const context = options.tipos ? ctx(undefined, { tipos: options.tipos as never }) : ctx();
  const input = validateEmission(body, context);
  return {
    input,
    doc: buildDocument(input, {
      emisor: EMISOR,
      folio: 42,
      ...(options.exchangeRate === undefined ? {} : { exchangeRate: options.exchangeRate }),
    }),
  };
}

const ref33 = {
  line_num: 1,
  tipo_doc_ref: 33,
  folio_ref: 1001,
  fecha_ref: '2026-03-02',
  razon_ref: 'Ajuste',
};

describe('input: totals per type (hand-computed, SII rules)', () => {
  it('33 with item discount, exempt line, global discount, surcharge and exempt discount', () => {
    const { doc } = build(
      factura({
        items: [
          // 3 x 1190.5 = 3571.5; descuento round(357.15) = 357; 3571.5 - 357 = 3214.5 -> 3215
          {
            nombre: 'Tornillos',
            cantidad: 3,
            precio_unitario: 1190.5,
            descuento_pct: 10,
            exento: false,
            monto_item: 3215,
          },
          // 1.5 x 2000 = 3000
          { nombre: 'Tuercas', cantidad: 1.5, precio_unitario: 2000, exento: false, monto_item: 3000 },
          // exempt: 1 x 5000
          { nombre: 'Flete exento', cantidad: 1, precio_unitario: 5000, exento: true, monto_item: 5000 },
        ],
        descuento_global: [
          // 5% of the taxable items 6215 = 310.75 -> 311
          { tipo: 'descuento', es_porcentaje: true, valor: 5, glosa: 'Pronto pago' },
          { tipo: 'recargo', es_porcentaje: false, valor: 500 },
          // 10% of the exempt items 5000 = 500
          { tipo: 'descuento', es_porcentaje: true, valor: 10, aplica_exento: true },
        ],
        // neto 6215 - 311 + 500 = 6404; exento 5000 - 500 = 4500; IVA round(1216.76) = 1217
        monto_neto: 6404,
        monto_exento: 4500,
        iva: 1217,
        monto_total: 12121,
      }),
    );
    expect(doc.Encabezado.Totales).to.deep.equal({
      MntNeto: 6404,
      MntExe: 4500,
      TasaIVA: 19,
      IVA: 1217,
      MntTotal: 12121,
    });
    expect(doc.Detalle[0]).to.include({
      DescuentoPct: 10,
      DescuentoMonto: 357,
      MontoItem: 3215,
      QtyItem: 3,
      PrcItem: 1190.5,
    });
    expect(doc.Detalle[2]).to.include({ IndExe: 1, MontoItem: 5000 });
    expect(doc.Detalle[0].IndExe).to.equal(undefined);
    expect(doc.DscRcgGlobal).to.deep.equal([
      { NroLinDR: 1, TpoMov: 'D', GlosaDR: 'Pronto pago', TpoValor: '%', ValorDR: 5 },
      { NroLinDR: 2, TpoMov: 'R', TpoValor: '$', ValorDR: 500 },
      { NroLinDR: 3, TpoMov: 'D', TpoValor: '%', ValorDR: 10, IndExeDR: 1 },
    ]);
    expect(doc.Encabezado.IdDoc).to.deep.equal({ TipoDTE: 33, Folio: 42, FchEmis: '2026-03-10', FmaPago: 1 });
  });

  it('33 rounds half away from zero at the IVA (neto 2450 -> IVA 465.5 -> 466)', () => {
    const { doc } = build(
      factura({
        items: [{ nombre: 'X', cantidad: 1, precio_unitario: 2450, exento: false, monto_item: 2450 }],
      }),
    );
    expect(doc.Encabezado.Totales).to.include({ MntNeto: 2450, IVA: 466, MntTotal: 2916 });
  });

  it('34: only exempt amounts; a global discount applies to them', () => {
    const { doc } = build(
      factura({
        tipo_dte: 34,
        items: [
          // 2 x 15000.5 = 30001
          { nombre: 'Asesoría', cantidad: 2, precio_unitario: 15000.5, exento: true, monto_item: 30001 },
          // 0.5 x 999 = 499.5 -> 500
          { nombre: 'Curso', cantidad: 0.5, precio_unitario: 999, exento: true, monto_item: 500 },
        ],
        descuento_global: [{ tipo: 'descuento', es_porcentaje: false, valor: 1000 }],
        // 30001 + 500 - 1000 = 29501
        monto_exento: 29501,
        monto_total: 29501,
      }),
    );
    expect(doc.Encabezado.Totales).to.deep.equal({ MntExe: 29501, MntTotal: 29501 });
    expect(doc.DscRcgGlobal?.[0]).to.include({ IndExeDR: 1, TpoValor: '$', ValorDR: 1000 });
  });

  it('46: IVA withheld in full (ImptoReten 15), lines with CodImpAdic 15, total = neto', () => {
    const { doc } = build(
      factura({
        tipo_dte: 46,
        items: [
          // 100 x 350 = 35000
          {
            nombre: 'Cobre en bruto',
            cantidad: 100,
            unidad: 'KG',
            precio_unitario: 350,
            exento: false,
            monto_item: 35000,
          },
          // 3 x 1234 = 3702; descuento round(185.1) = 185; 3517
          {
            nombre: 'Chatarra',
            cantidad: 3,
            precio_unitario: 1234,
            descuento_pct: 5,
            exento: false,
            monto_item: 3517,
          },
        ],
        // neto 38517; IVA round(7318.23) = 7318, withheld: total 38517 + 7318 - 7318
        monto_neto: 38517,
        iva: 7318,
        monto_total: 38517,
      }),
    );
    expect(doc.Encabezado.Totales).to.deep.equal({
      MntNeto: 38517,
      TasaIVA: 19,
      IVA: 7318,
      ImptoReten: [{ TipoImp: 15, TasaImp: 19, MontoImp: 7318 }],
      MntTotal: 38517,
    });
    expect(doc.Detalle.map((d) => d.CodImpAdic)).to.deep.equal(['15', '15']);
    expect(doc.Detalle[0].UnmdItem).to.equal('KG');
  });

  it('52 venta with transport data: Transporte, IndTraslado, TipoDespacho and sale totals', () => {
    const { doc } = build({
      tipo_dte: 52,
      rut_emisor: EMISOR.rut,
      receptor: { ...RECEPTOR },
      fecha_emision: '2026-03-10',
      // 10 x 990 = 9900; IVA 1881; total 11781
      items: [
        { nombre: 'Sacos de cemento', cantidad: 10, precio_unitario: 990, exento: false, monto_item: 9900 },
      ],
      monto_total: 11781,
      despacho: {
        ind_traslado: 1,
        tipo_despacho: 2,
        direccion_origen: 'Bodega Central 100',
        comuna_origen: 'Quilicura',
        ciudad_origen: 'Santiago',
        direccion_destino: 'Obra Los Álamos 55',
        comuna_destino: 'Maipú',
        transportista: { rut: '60803000-k', razon_social: 'Transportes Sur' },
        conductor: { rut: '14-0', nombre: 'Juan Pérez' },
        vehiculo: { patente: 'ABCD12' },
      },
    });
    expect(doc.Encabezado.Totales).to.deep.equal({ MntNeto: 9900, TasaIVA: 19, IVA: 1881, MntTotal: 11781 });
    expect(doc.Encabezado.IdDoc).to.include({ TipoDespacho: 2, IndTraslado: 1 });
    expect(doc.Encabezado.Transporte).to.deep.equal({
      Patente: 'ABCD12',
      RUTTrans: '60803000-K',
      Chofer: { RUTChofer: '14-0', NombreChofer: 'Juan Pérez' },
      DirDest: 'Obra Los Álamos 55',
      CmnaDest: 'Maipú',
    });
    expect(doc.Encabezado.Emisor).to.include({
      DirOrigen: 'Bodega Central 100',
      CmnaOrigen: 'Quilicura',
      CiudadOrigen: 'Santiago',
    });
  });

  it('52 traslado interno without prices: zero totals, no PrcItem, no TipoDespacho', () => {
    const { doc } = build({
      tipo_dte: 52,
      rut_emisor: EMISOR.rut,
      receptor: { rut: EMISOR.rut, razon_social: EMISOR.razonSocial },
      fecha_emision: '2026-03-10',
      items: [{ nombre: 'Estanterías', cantidad: 4, precio_unitario: 0, exento: false, monto_item: 0 }],
      despacho: {
        ind_traslado: 5,
        direccion_origen: 'Bodega A',
        comuna_origen: 'Quilicura',
        direccion_destino: 'Bodega B',
        comuna_destino: 'Pudahuel',
      },
    });
    expect(doc.Encabezado.Totales).to.deep.equal({ MntNeto: 0, TasaIVA: 19, IVA: 0, MntTotal: 0 });
    expect(doc.Detalle[0].PrcItem).to.equal(undefined);
    expect(doc.Encabezado.IdDoc.TipoDespacho).to.equal(undefined);
    expect(doc.Encabezado.IdDoc.IndTraslado).to.equal(5);
  });

  it('56 debit note correcting amounts of a 33, with its reference', () => {
    const { doc } = build({
      tipo_dte: 56,
      rut_emisor: EMISOR.rut,
      receptor: { ...RECEPTOR },
      fecha_emision: '2026-03-10',
      nd_reason: 'correccion_monto',
      // 1 x 10000.4 -> 10000; IVA 1900; total 11900
      items: [
        {
          nombre: 'Diferencia de precio',
          cantidad: 1,
          precio_unitario: 10000.4,
          exento: false,
          monto_item: 10000,
        },
      ],
      references: [{ ...ref33, cod_ref: 3 }],
      monto_total: 11900,
    });
    expect(doc.Encabezado.Totales).to.deep.equal({ MntNeto: 10000, TasaIVA: 19, IVA: 1900, MntTotal: 11900 });
    expect(doc.Referencia).to.deep.equal([
      {
        NroLinRef: 1,
        TpoDocRef: '33',
        FolioRef: '1001',
        FchRef: '2026-03-02',
        CodRef: 3,
        RazonRef: 'Ajuste',
      },
    ]);
  });

  it('61 credit note over a 46 keeps the withholding (ImptoReten 15, total = neto)', () => {
    const { doc } = build({
      tipo_dte: 61,
      rut_emisor: EMISOR.rut,
      receptor: { ...RECEPTOR },
      fecha_emision: '2026-03-10',
      nc_reason: 'devolucion',
      // 2 x 4500 = 9000; IVA 1710 withheld; total 9000
      items: [
        {
          nombre: 'Devolución chatarra',
          cantidad: 2,
          precio_unitario: 4500,
          exento: false,
          monto_item: 9000,
        },
      ],
      references: [{ ...ref33, tipo_doc_ref: 46, cod_ref: 3 }],
      monto_neto: 9000,
      iva: 1710,
      monto_total: 9000,
    });
    expect(doc.Encabezado.Totales).to.deep.equal({
      MntNeto: 9000,
      TasaIVA: 19,
      IVA: 1710,
      ImptoReten: [{ TipoImp: 15, TasaImp: 19, MontoImp: 1710 }],
      MntTotal: 9000,
    });
    expect(doc.Detalle[0].CodImpAdic).to.equal('15');
  });

  it('61 text correction (cod_ref 2): every amount is zero', () => {
    const { doc } = build({
      tipo_dte: 61,
      rut_emisor: EMISOR.rut,
      receptor: { ...RECEPTOR },
      fecha_emision: '2026-03-10',
      nc_reason: 'correccion_texto',
      items: [
        {
          nombre: 'Donde dice Juan debe decir Juana',
          cantidad: 1,
          precio_unitario: 0,
          exento: false,
          monto_item: 0,
        },
      ],
      references: [{ ...ref33, cod_ref: 2, razon_ref: 'Corrige giro del receptor' }],
    });
    expect(doc.Encabezado.Totales).to.deep.equal({ MntNeto: 0, TasaIVA: 19, IVA: 0, MntTotal: 0 });
    expect(doc.Referencia?.[0]).to.include({ CodRef: 2, RazonRef: 'Corrige giro del receptor' });
  });

  it('61 annulling a 34: exempt amounts only; references sorted by line_num', () => {
    const { doc } = build({
      tipo_dte: 61,
      rut_emisor: EMISOR.rut,
      receptor: { ...RECEPTOR },
      fecha_emision: '2026-03-10',
      nc_reason: 'anulacion',
      items: [
        { nombre: 'Anula asesoría', cantidad: 1, precio_unitario: 30001, exento: true, monto_item: 30001 },
      ],
      references: [{ ...ref33, tipo_doc_ref: 34, cod_ref: 1, folio_ref: '77' }],
    });
    expect(doc.Encabezado.Totales).to.deep.equal({ MntExe: 30001, MntTotal: 30001 });
    expect(doc.Referencia?.[0]).to.include({ TpoDocRef: '34', FolioRef: '77', CodRef: 1 });
  });

  it('110 in DOLAR USA: amounts with 4 decimals, OtraMoneda in PESO CL by the caller rate', () => {
    const body = {
      tipo_dte: 110,
      rut_emisor: EMISOR.rut,
      fecha_emision: '2026-03-10',
      receptor: { razon_social: 'ACME Imports Inc.', extranjero: { num_id: 'US-998877', nacionalidad: 225 } },
      // 12 x 15.75 = 189; 2.5 x 10.333 = 25.8325; MntExe = MntTotal = 214.8325
      items: [
        {
          nombre: 'Vino tinto caja',
          cantidad: 12,
          unidad: 'CJ',
          precio_unitario: 15.75,
          exento: true,
          monto_item: 189,
        },
        { nombre: 'Aceite de oliva', cantidad: 2.5, precio_unitario: 10.333, monto_item: 25.8325 },
      ],
      tpo_moneda: 'DOLAR USA',
      ind_servicio: 3,
      monto_total: 214.8325,
      aduana: {
        cod_mod_venta: 1,
        cod_clau_venta: 1,
        tot_clau_venta: 214.83,
        cod_pais_destin: 225,
        tot_bultos: 0,
        mnt_flete: 0,
      },
    };
    const { doc } = build(body, { exchangeRate: 943.287 });
    // 214.8325 x 943.287 = 202648.92... -> 202649
    expect(doc.Encabezado.Totales).to.deep.equal({
      TpoMoneda: 'DOLAR USA',
      MntExe: 214.8325,
      MntTotal: 214.8325,
    });
    expect(doc.Encabezado.OtraMoneda).to.deep.equal({
      TpoMoneda: 'PESO CL',
      TpoCambio: 943.287,
      MntExeOtrMnda: 202649,
      MntTotOtrMnda: 202649,
    });
    expect(doc.Encabezado.Receptor).to.deep.equal({
      RUTRecep: '55555555-5',
      RznSocRecep: 'ACME Imports Inc.',
      Extranjero: { NumId: 'US-998877', Nacionalidad: 225 },
    });
    expect(doc.Encabezado.Transporte?.Aduana).to.deep.equal({
      CodModVenta: 1,
      CodClauVenta: 1,
      TotClauVenta: 214.83,
      CodPaisDestin: 225,
    });
    expect(doc.Detalle[1]).to.deep.equal({
      NroLinDet: 2,
      IndExe: 1,
      NmbItem: 'Aceite de oliva',
      MontoItem: 25.8325,
      QtyItem: 2.5,
      PrcItem: 10.333,
    });
    expect(doc.Encabezado.IdDoc.IndServicio).to.equal(3);
  });

  it('110 with its own otra_moneda: the declared rate is used and the pesos are checked', () => {
    const { doc } = build(
      {
        tipo_dte: 110,
        receptor: { rut: '55555555-5', razon_social: 'ACME' },
        items: [{ nombre: 'Vino', cantidad: 12, precio_unitario: 15.75, monto_item: 189 }],
        tpo_moneda: 'DOLAR USA',
        monto_total: 189,
        // 189 x 950.5 = 179644.5 -> 179645
        otra_moneda: { tpo_moneda: 'PESO CL', tpo_cambio: 950.5, mnt_exe: 179645, mnt_total: 179645 },
      },
      { exchangeRate: 1 },
    );
    expect(doc.Encabezado.OtraMoneda).to.deep.equal({
      TpoMoneda: 'PESO CL',
      TpoCambio: 950.5,
      MntExeOtrMnda: 179645,
      MntTotOtrMnda: 179645,
    });
  });

  it('112 credit note in EURO referencing its 110; caller rate rounded to the 4 decimals of TpoCambio', () => {
    const { doc } = build(
      {
        tipo_dte: 112,
        receptor: { razon_social: 'Euro Buyer GmbH' },
        items: [{ nombre: 'Devolución', cantidad: 1, precio_unitario: 100.5, monto_item: 100.5 }],
        tpo_moneda: 'EURO',
        monto_total: 100.5,
        referencias: [
          {
            tipo_doc_ref: 110,
            folio_ref: 15,
            fecha_ref: '2026-03-01',
            codigo_ref: 3,
            razon_ref: 'Devolución parcial',
          },
        ],
      },
      // 1020.45678 -> 1020.4568; 100.5 x 1020.4568 = 102555.9084 -> 102556
      { exchangeRate: 1020.45678 },
    );
    expect(doc.Encabezado.OtraMoneda).to.deep.equal({
      TpoMoneda: 'PESO CL',
      TpoCambio: 1020.4568,
      MntExeOtrMnda: 102556,
      MntTotOtrMnda: 102556,
    });
    expect(doc.Referencia).to.deep.equal([
      {
        NroLinRef: 1,
        TpoDocRef: '110',
        FolioRef: '15',
        FchRef: '2026-03-01',
        CodRef: 3,
        RazonRef: 'Devolución parcial',
      },
    ]);
  });

  it('111 debit note builds when the calling path accepts it (not on POST /dtes); PESO CL in whole pesos', () => {
    const { doc } = build(
      {
        tipo_dte: 111,
        receptor: { razon_social: 'ACME' },
        // PESO CL: whole pesos. 3 x 33333.335 = 100000.005 -> 100000; 2 x 0.75 = 1.5 -> 2
        items: [
          { nombre: 'Flete adicional', cantidad: 3, precio_unitario: 33333.335, monto_item: 100000 },
          { nombre: 'Sello', cantidad: 2, precio_unitario: 0.75, monto_item: 2 },
        ],
        tpo_moneda: 'PESO CL',
        monto_total: 100002,
        referencias: [{ tipo_doc_ref: '110', folio_ref: '15', fecha_ref: '2026-03-01', codigo_ref: 3 }],
      },
      { tipos: [110, 111, 112] },
    );
    expect(doc.Encabezado.Totales).to.deep.equal({ TpoMoneda: 'PESO CL', MntExe: 100002, MntTotal: 100002 });
    // PESO CL needs no external rate: TpoCambio 1
    expect(doc.Encabezado.OtraMoneda).to.deep.equal({
      TpoMoneda: 'PESO CL',
      TpoCambio: 1,
      MntExeOtrMnda: 100002,
      MntTotOtrMnda: 100002,
    });
    expect(doc.Encabezado.IdDoc.TipoDTE).to.equal(111);
  });

  it('computeTotals gives the record figures in CLP (exports converted)', () => {
    const input = validateEmission(factura(), ctx());
    expect(computeTotals(input).clp).to.deep.equal({
      montoNeto: 10000,
      montoExento: 0,
      iva: 1900,
      montoTotal: 11900,
    });
    const exp = validateEmission(
      {
        tipo_dte: 110,
        receptor: { razon_social: 'ACME' },
        items: [{ nombre: 'Vino', cantidad: 2, precio_unitario: 10, monto_item: 20 }],
        tpo_moneda: 'DOLAR USA',
        monto_total: 20,
      },
      ctx(),
    ) as EmissionInput;
    expect(computeTotals(exp).clp).to.equal(undefined);
    expect(computeTotals(exp, { exchangeRate: 900.12345 }).clp).to.deep.equal({
      montoNeto: 0,
      montoExento: 18002, // 20 x 900.1235 = 18002.47
      iva: 0,
      montoTotal: 18002,
    });
  });

  it('quantities and prices with 6 decimals are multiplied exactly (no float drift)', () => {
    // 999999.999999 x 0.000001 = 0.999999999999 -> 1 ; 0.1 x 3 = 0.3 -> 0 ; 1.005 x 1000 = 1005
    const { doc } = build(
      factura({
        items: [
          { nombre: 'A', cantidad: 999999.999999, precio_unitario: 0.000001, exento: false, monto_item: 1 },
          { nombre: 'B', cantidad: 3, precio_unitario: 0.1, exento: false, monto_item: 0 },
          { nombre: 'C', cantidad: 1.005, precio_unitario: 1000, exento: false, monto_item: 1005 },
        ],
      }),
    );
    expect(doc.Detalle.map((d) => d.MontoItem)).to.deep.equal([1, 0, 1005]);
    expect(doc.Encabezado.Totales).to.include({ MntNeto: 1006, IVA: 191, MntTotal: 1197 });
  });
});
