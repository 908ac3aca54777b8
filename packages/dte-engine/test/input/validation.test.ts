import { expect } from 'chai';
import { ServiceError } from '@dte/error-catalog';
import { buildDocument, validateEmission, type EmisorProfile } from '../../src/input';
import { EMISOR, RECEPTOR, caught, ctx, factura } from './fixtures';

function fails(body: unknown, context = ctx()) {
  const err = caught(() => validateEmission(body, context));
  expect(err).to.be.instanceOf(ServiceError);
  return err;
}

function issuePaths(body: unknown, context = ctx()): string[] {
  const err = fails(body, context);
  expect(err.code).to.equal('validation_failed');
  return (err.issues ?? []).map((i) => i.path);
}

const item = (over: Record<string, unknown> = {}) => ({
  nombre: 'Item',
  cantidad: 1,
  precio_unitario: 1000,
  exento: false,
  monto_item: 1000,
  ...over,
});
const ref = (over: Record<string, unknown> = {}) => ({
  line_num: 1,
  tipo_doc_ref: 33,
  folio_ref: 10,
  fecha_ref: '2026-03-01',
  cod_ref: 3,
  razon_ref: 'Corrige monto',
  ...over,
});
const note = (tipo: 56 | 61, over: Record<string, unknown> = {}) => ({
  tipo_dte: tipo,
  rut_emisor: EMISOR.rut,
  receptor: { ...RECEPTOR },
  fecha_emision: '2026-03-10',
  items: [item()],
  references: [ref()],
  ...(tipo === 56 ? { nd_reason: 'correccion_monto' } : { nc_reason: 'correccion_monto' }),
  ...over,
});
const guia = (despacho: Record<string, unknown> | undefined, over: Record<string, unknown> = {}) => ({
  tipo_dte: 52,
  rut_emisor: EMISOR.rut,
  receptor: { ...RECEPTOR },
  fecha_emision: '2026-03-10',
  items: [item()],
  ...(despacho ? { despacho } : {}),
  ...over,
});
const despacho = (over: Record<string, unknown> = {}) => ({
  ind_traslado: 1,
  tipo_despacho: 1,
  direccion_origen: 'Bodega 1',
  comuna_origen: 'Quilicura',
  direccion_destino: 'Obra 2',
  comuna_destino: 'Maipú',
  ...over,
});
const exportBody = (over: Record<string, unknown> = {}) => ({
  tipo_dte: 110,
  receptor: { razon_social: 'ACME Inc.' },
  items: [{ nombre: 'Vino', cantidad: 2, precio_unitario: 10.5, monto_item: 21 }],
  tpo_moneda: 'DOLAR USA',
  monto_total: 21,
  ...over,
});

describe('input: schema failures answer validation_failed with issues[] paths', () => {
  it('not an object, tipo_dte missing or unknown', () => {
    expect(issuePaths('hello')).to.deep.equal(['']);
    expect(issuePaths({ ...factura(), tipo_dte: undefined })).to.deep.equal(['tipo_dte']);
    expect(issuePaths(factura({ tipo_dte: 99 }))).to.deep.equal(['tipo_dte']);
    expect(issuePaths(factura({ tipo_dte: '33' }))).to.deep.equal(['tipo_dte']);
  });

  it('RUT with a wrong check digit or shape (modulo 11), one issue per field', () => {
    expect(issuePaths(factura({ rut_emisor: '76086428-4' }))).to.deep.equal(['rut_emisor']);
    const err = fails(factura({ receptor: { ...RECEPTOR, rut: '77777777-K' } }));
    expect(err.issues).to.deep.equal([
      { path: 'receptor.rut', message: 'is not a valid RUT (check digit modulo 11)' },
    ]);
    expect(issuePaths(factura({ receptor: { ...RECEPTOR, rut: '77.777.777-7' } }))).to.deep.equal([
      'receptor.rut',
    ]);
  });

  it('field bounds of the DTE emission input table', () => {
    const paths = issuePaths(
      factura({
        receptor: {
          ...RECEPTOR,
          razon_social: 'x'.repeat(101),
          giro: 'g'.repeat(41),
          comuna: 'c'.repeat(21),
        },
        correo_receptor: ['a@b.cl', 'a@b.cl', 'a@b.cl', 'a@b.cl', 'a@b.cl', 'a@b.cl'],
        forma_pago: 4,
        pagos: [{ fecha: '2026-03-20', monto: 0 }],
        sii_env: 'test',
        certificate_id: 'not-a-uuid',
        emisor: { actividadEconomica: 0 },
        descuento_global: [{ tipo: 'rebaja', es_porcentaje: true, valor: 0 }],
        extra_field: true,
      }),
    );
    expect(paths).to.have.members([
      'receptor.razon_social',
      'receptor.giro',
      'receptor.comuna',
      'correo_receptor',
      'forma_pago',
      'pagos[0].monto',
      'sii_env',
      'certificate_id',
      'emisor.actividadEconomica',
      'descuento_global[0].tipo',
      'descuento_global[0].valor',
      'extra_field',
    ]);
  });

  it('razon_social is trimmed and must not be empty', () => {
    expect(issuePaths(factura({ receptor: { ...RECEPTOR, razon_social: '   ' } }))).to.deep.equal([
      'receptor.razon_social',
    ]);
    const input = validateEmission(factura({ receptor: { ...RECEPTOR, razon_social: '  ACME  ' } }), ctx());
    expect(input.receptor.razon_social).to.equal('ACME');
  });

  it('correo_receptor may be null', () => {
    expect(() => validateEmission(factura({ correo_receptor: null }), ctx())).not.to.throw();
  });

  it('item bounds: cantidad > 0 and <= 999999.999999, precio 0..999999999999, descuento 0-100, codigos', () => {
    const paths = issuePaths(
      factura({
        items: [
          item({ cantidad: 0 }),
          item({ cantidad: 1000000 }),
          item({ precio_unitario: -1 }),
          item({ descuento_pct: 100.5 }),
          item({ monto_item: 10.5 }),
          item({ exento: undefined }),
          item({ codigos: [{ tipo: 'INT1' }] }),
          item({ nombre: 'n'.repeat(81) }),
          item({ unidad: 'CAJAS' }),
        ],
      }),
    );
    expect(paths).to.deep.equal([
      'items[0].cantidad',
      'items[1].cantidad',
      'items[2].precio_unitario',
      'items[3].descuento_pct',
      'items[4].monto_item',
      'items[5].exento',
      'items[6].codigos[0].valor',
      'items[7].nombre',
      'items[8].unidad',
    ]);
  });

  it('decimal places the SII types hold: cantidad/precio 6, descuento_pct and ValorDR 2', () => {
    const paths = issuePaths(
      factura({
        items: [
          item({ cantidad: 1.0000001 }),
          item({ precio_unitario: 0.1234567 }),
          item({ descuento_pct: 12.345 }),
        ],
        descuento_global: [{ tipo: 'descuento', es_porcentaje: true, valor: 1.001 }],
      }),
    );
    expect(paths).to.deep.equal([
      'items[0].cantidad',
      'items[1].precio_unitario',
      'items[2].descuento_pct',
      'descuento_global[0].valor',
    ]);
  });

  it('33 and 34 require receptor giro, direccion, comuna and forma_pago; 61 does not', () => {
    const body = factura({
      receptor: { rut: RECEPTOR.rut, razon_social: 'ACME', giro: ' ' },
      forma_pago: undefined,
    });
    // said by the 33/34 branches of dte-emission-request.schema.json (the order is the schema's)
    expect(issuePaths(body)).to.have.members([
      'receptor.giro',
      'receptor.direccion',
      'receptor.comuna',
      'forma_pago',
    ]);
    expect(issuePaths({ ...body, tipo_dte: 34, items: [item({ exento: true })] })).to.have.length(4);
    expect(() =>
      validateEmission(note(61, { receptor: { rut: RECEPTOR.rut, razon_social: 'ACME' } }), ctx()),
    ).not.to.throw();
  });

  it('descuento_global is not applicable to 46; a $ amount must be whole pesos; it cannot go below zero', () => {
    expect(
      issuePaths(
        factura({ tipo_dte: 46, descuento_global: [{ tipo: 'descuento', es_porcentaje: true, valor: 5 }] }),
      ),
    ).to.deep.equal(['descuento_global']);
    expect(
      issuePaths(factura({ descuento_global: [{ tipo: 'descuento', es_porcentaje: false, valor: 10.5 }] })),
    ).to.deep.equal(['descuento_global[0].valor']);
    expect(
      issuePaths(factura({ descuento_global: [{ tipo: 'descuento', es_porcentaje: false, valor: 20000 }] })),
    ).to.deep.equal(['descuento_global[0]']);
  });

  it('references: line_num numbers them 1..n; notes need razon_ref; nd_reason only on 56', () => {
    expect(
      issuePaths(note(56, { references: [ref(), ref({ line_num: 1, tipo_doc_ref: 34 })] })),
    ).to.deep.equal(['references[1].line_num']);
    expect(issuePaths(note(61, { references: [ref({ razon_ref: undefined })] }))).to.deep.equal([
      'references[0].razon_ref',
    ]);
    expect(issuePaths(factura({ nd_reason: 'correccion_monto' }))).to.deep.equal(['nd_reason']);
    expect(issuePaths(note(56, { references: [ref({ fecha_ref: '1999-12-31' })] }))).to.deep.equal([
      'references[0].fecha_ref',
    ]);
  });

  it('52: tipo_despacho required except with ind_traslado 5, where sending it fails', () => {
    expect(issuePaths(guia(despacho({ tipo_despacho: undefined })))).to.deep.equal([
      'despacho.tipo_despacho',
    ]);
    expect(issuePaths(guia(despacho({ ind_traslado: 5, tipo_despacho: 1 })))).to.deep.equal([
      'despacho.tipo_despacho',
    ]);
    expect(issuePaths(guia(despacho({ ind_traslado: 4 })))).to.deep.equal(['despacho.ind_traslado']);
    expect(issuePaths(guia(despacho(), { fecha_emision: undefined }))).to.deep.equal(['fecha_emision']);
    expect(issuePaths(guia(despacho(), { items: [item({ monto_item: -1 })] }))).to.deep.equal([
      'items[0].monto_item',
    ]);
    expect(issuePaths(guia(despacho({ conductor: { rut: '14-0', nombre: 'x'.repeat(31) } })))).to.deep.equal([
      'despacho.conductor.nombre',
    ]);
  });

  it('exports: additional properties rejected, exento only true, otra_moneda in PESO CL, 4 decimals', () => {
    expect(
      issuePaths(
        exportBody({
          descuento_global: [],
          forma_pago: 1,
          items: [{ ...exportBody().items, exento: false }],
        }),
      ),
    ).to.include.members(['descuento_global', 'forma_pago']);
    expect(
      issuePaths(
        exportBody({
          items: [{ nombre: 'V', cantidad: 1, precio_unitario: 1, monto_item: 1, exento: false }],
        }),
      ),
    ).to.deep.equal(['items[0].exento']);
    expect(
      issuePaths(exportBody({ otra_moneda: { tpo_moneda: 'EURO', tpo_cambio: 1000, mnt_total: 21000 } })),
    ).to.deep.equal(['otra_moneda.tpo_moneda']);
    expect(issuePaths(exportBody({ monto_total: 21.00001 }))).to.deep.equal(['monto_total']);
    expect(issuePaths(exportBody({ tpo_moneda: 'PESO CL', monto_total: 21.5 }))).to.deep.equal([
      'monto_total',
    ]);
    expect(issuePaths(exportBody({ tpo_moneda: 'DOLAR' }))).to.deep.equal(['tpo_moneda']);
    expect(issuePaths(exportBody({ monto_total: undefined }))).to.deep.equal(['monto_total']);
    expect(issuePaths(exportBody({ ind_servicio: 1 }))).to.deep.equal(['ind_servicio']);
    expect(
      issuePaths(exportBody({ aduana: { tara: 0, booking: 'b'.repeat(21), other: 1 } })),
    ).to.have.members(['aduana.tara', 'aduana.booking', 'aduana.other']);
  });
});

describe('input: rules with their own catalog codes', () => {
  it('dte.tipo_not_supported: 39 and 41 on this path, 111 unless the path takes it', () => {
    expect(fails(factura({ tipo_dte: 39 })).code).to.equal('dte.tipo_not_supported');
    expect(fails({ tipo_dte: 41 }).code).to.equal('dte.tipo_not_supported');
    expect(fails(exportBody({ tipo_dte: 111 })).code).to.equal('dte.tipo_not_supported');
    expect(fails(factura(), ctx(undefined, { tipos: [52] })).code).to.equal('dte.tipo_not_supported');
  });

  it('items_empty and items_exceed_max (detail.count) win over the schema', () => {
    expect(fails(factura({ items: [] })).code).to.equal('items_empty');
    const err = fails(factura({ items: Array.from({ length: 61 }, () => item()) }));
    expect(err.code).to.equal('items_exceed_max');
    expect(err.detail).to.include({ count: 61 });
    expect(() =>
      validateEmission(factura({ items: Array.from({ length: 60 }, () => item()) }), ctx()),
    ).not.to.throw();
    expect(issuePaths(factura({ items: undefined }))).to.deep.equal(['items']);
  });

  it('dte.52.dispatch_required when despacho is missing, even with other schema errors', () => {
    expect(fails(guia(undefined)).code).to.equal('dte.52.dispatch_required');
    expect(fails(guia(undefined, { receptor: {} })).code).to.equal('dte.52.dispatch_required');
  });

  it('dte.52.transportista/conductor/vehiculo_required when the emisor transports', () => {
    const d = despacho({ tipo_despacho: 2 });
    const e1 = fails(guia(d));
    expect(e1.code).to.equal('dte.52.transportista_required');
    expect(e1.detail).to.deep.equal({ field: 'despacho.transportista' });
    expect(fails(guia({ ...d, transportista: { rut: '14-0', razon_social: 'T' } })).code).to.equal(
      'dte.52.conductor_required',
    );
    expect(
      fails(
        guia({
          ...d,
          transportista: { rut: '14-0', razon_social: 'T' },
          conductor: { rut: '6-K', nombre: 'C' },
        }),
      ).code,
    ).to.equal('dte.52.vehiculo_required');
    expect(() => validateEmission(guia({ ...d, transporte_sin_informacion: true }), ctx())).not.to.throw();
    expect(() => validateEmission(guia(despacho({ tipo_despacho: 1 })), ctx())).not.to.throw();
  });

  it('references_required for notes without references, and for export notes not referencing their 110', () => {
    expect(fails(note(61, { references: undefined })).code).to.equal('references_required');
    expect(fails(note(56, { references: [] })).code).to.equal('references_required');
    const err = fails(
      exportBody({
        tipo_dte: 112,
        referencias: [{ tipo_doc_ref: 807, folio_ref: 'DUS-1', fecha_ref: '2026-03-01', codigo_ref: 3 }],
      }),
    );
    expect(err.code).to.equal('references_required');
    expect(fails(exportBody({ tipo_dte: 112 })).code).to.equal('references_required');
  });

  it('reference_invalid_cod_ref: cod_ref outside 1/2/3 (missing on a note counts)', () => {
    const err = fails(note(61, { references: [ref({ cod_ref: 4 })] }));
    expect(err.code).to.equal('reference_invalid_cod_ref');
    expect(err.detail).to.deep.equal({ field: 'references[0].cod_ref', value: 4 });
    expect(fails(note(56, { references: [ref({ cod_ref: undefined })] })).code).to.equal(
      'reference_invalid_cod_ref',
    );
    expect(fails(factura({ references: [ref({ cod_ref: '1' })] })).code).to.equal(
      'reference_invalid_cod_ref',
    );
    expect(
      fails(
        exportBody({
          tipo_dte: 112,
          referencias: [{ tipo_doc_ref: 110, folio_ref: 1, fecha_ref: '2026-03-01', codigo_ref: 0 }],
        }),
      ).code,
    ).to.equal('reference_invalid_cod_ref');
    // commercial references of a 33 need no cod_ref; aliases map to official codes
    const input = validateEmission(
      factura({
        references: [
          ref({
            cod_ref: undefined,
            tipo_doc_ref: 'orden_compra',
            folio_ref: '4500012345',
            razon_ref: undefined,
          }),
          ref({ line_num: 2, cod_ref: undefined, tipo_doc_ref: 'hes', folio_ref: 77 }),
        ],
      }),
      ctx(),
    );
    const refs = buildDocument(input, { emisor: EMISOR, folio: 1 }).Referencia;
    expect(refs?.map((r) => [r.TpoDocRef, r.FolioRef, r.CodRef])).to.deep.equal([
      ['801', '4500012345', undefined],
      ['HES', '77', undefined],
    ]);
    // folio_ref: a positive integer or digits without leading zero (spec)
    expect(
      issuePaths(factura({ references: [ref({ cod_ref: undefined, folio_ref: 'OC-9' })] })),
    ).to.deep.equal(['references[0].folio_ref']);
  });

  it('text_correction_must_be_zero: cod_ref 2 with amounts', () => {
    const err = fails(note(61, { nc_reason: 'correccion_texto', references: [ref({ cod_ref: 2 })] }));
    expect(err.code).to.equal('text_correction_must_be_zero');
    expect(err.detail).to.deep.equal({ field: 'items[0].precio_unitario', value: 1000 });
    const zeroItems = [item({ precio_unitario: 0, monto_item: 0 })];
    expect(
      fails(
        note(61, {
          nc_reason: 'correccion_texto',
          items: zeroItems,
          references: [ref({ cod_ref: 2 })],
          monto_total: 5,
        }),
      ).detail,
    ).to.deep.equal({ field: 'monto_total', value: 5 });
  });

  it('dte.reference.single_required: cod_ref 1 or 2 with several references', () => {
    const err = fails(
      note(61, {
        nc_reason: 'anulacion',
        references: [ref({ cod_ref: 1 }), ref({ line_num: 2, cod_ref: 1 })],
      }),
    );
    expect(err.code).to.equal('dte.reference.single_required');
    // cod_ref 3 admits several
    expect(() =>
      validateEmission(note(61, { references: [ref(), ref({ line_num: 2, folio_ref: 11 })] }), ctx()),
    ).not.to.throw();
  });

  it('debit notes: interese_moratorio_legal blocked, invalid reasons with validReasons, reference types', () => {
    expect(fails(note(56, { nd_reason: 'interese_moratorio_legal' })).code).to.equal(
      'dte.nota_debito.interese_moratorio_legal',
    );
    const bad = fails(note(56, { nd_reason: 'otro' }));
    expect(bad.code).to.equal('dte.nota_debito.invalid_reason');
    expect(bad.detail?.validReasons).to.deep.equal([
      'correccion_monto',
      'reposicion_nc_anulada',
      'interese_moratorio_contractual',
    ]);
    expect(fails(note(56, { nd_reason: undefined })).code).to.equal('dte.nota_debito.invalid_reason');
    // reasons are trimmed like every text
    expect(() => validateEmission(note(56, { nd_reason: ' correccion_monto ' }), ctx())).not.to.throw();
    const incoherent = fails(
      note(56, { nd_reason: 'reposicion_nc_anulada', references: [ref({ tipo_doc_ref: 61 })] }),
    );
    expect(incoherent.code).to.equal('dte.nota_debito.invalid_reason');
    expect(incoherent.detail?.validReasons).to.deep.equal([
      'correccion_monto',
      'interese_moratorio_contractual',
    ]);
    expect(fails(note(56, { references: [ref({ tipo_doc_ref: 52 })] })).code).to.equal(
      'dte.nota_debito.reference_tipo_unsupported',
    );
    expect(
      fails(note(56, { nd_reason: 'reposicion_nc_anulada', references: [ref({ cod_ref: 1 })] })).code,
    ).to.equal('dte.nota_debito.reference_tipo_unsupported');
    expect(() =>
      validateEmission(
        note(56, { nd_reason: 'reposicion_nc_anulada', references: [ref({ tipo_doc_ref: 61, cod_ref: 1 })] }),
        ctx(),
      ),
    ).not.to.throw();
  });

  it('credit notes: invalid/incoherent reason, mixed cod_ref, unsupported reference types', () => {
    expect(fails(note(61, { nc_reason: 'regalo' })).code).to.equal('dte.nota_credito.invalid_reason');
    expect(fails(note(61, { nc_reason: undefined })).code).to.equal('dte.nota_credito.invalid_reason');
    const incoherent = fails(note(61, { nc_reason: 'anulacion' }));
    expect(incoherent.code).to.equal('dte.nota_credito.invalid_reason');
    expect(incoherent.detail).to.deep.include({ nc_reason: 'anulacion', cod_ref: 3 });
    expect(incoherent.detail?.validReasons).to.deep.equal([
      'devolucion',
      'descuento_posterior',
      'correccion_monto',
    ]);
    expect(fails(note(61, { references: [ref(), ref({ line_num: 2, cod_ref: 1 })] })).code).to.equal(
      'dte.nota_credito.invalid_cod_ref',
    );
    expect(fails(note(61, { references: [ref({ tipo_doc_ref: 61 })] })).code).to.equal(
      'dte.nota_credito.reference_tipo_unsupported',
    );
    expect(fails(note(61, { references: [ref({ tipo_doc_ref: 'orden_compra' })] })).code).to.equal(
      'dte.nota_credito.reference_tipo_unsupported',
    );
  });

  it('dte.mixed_retencion_references: a note over a 46 and a 33 at once', () => {
    const err = fails(note(61, { references: [ref({ tipo_doc_ref: 46 }), ref({ line_num: 2 })] }));
    expect(err.code).to.equal('dte.mixed_retencion_references');
  });

  it('dte.34.invalid_exenta and dte.46.invalid_afecta', () => {
    const e34 = fails(factura({ tipo_dte: 34, items: [item({ exento: true }), item()] }));
    expect(e34.code).to.equal('dte.34.invalid_exenta');
    expect(e34.detail).to.deep.equal({ field: 'items[1].exento' });
    expect(fails(factura({ tipo_dte: 46, items: [item({ exento: true })] })).code).to.equal(
      'dte.46.invalid_afecta',
    );
  });

  it('amount_arithmetic names the field, the expected and the declared amount', () => {
    const e1 = fails(factura({ items: [item({ cantidad: 3, precio_unitario: 333.5, monto_item: 1000 })] }));
    expect(e1.code).to.equal('amount_arithmetic');
    // 3 x 333.5 = 1000.5 -> 1001
    expect(e1.detail).to.include({ field: 'items[0].monto_item', expected: 1001, declared: 1000 });
    const e2 = fails(factura({ items: [item({ descuento_pct: 15, monto_item: 1000 })] }));
    expect(e2.detail).to.include({ field: 'items[0].monto_item', expected: 850, declared: 1000 });
    const e3 = fails(factura({ monto_neto: 1000, iva: 190, monto_total: 1190 }));
    expect(e3.detail).to.include({ field: 'monto_neto', expected: 10000, declared: 1000 });
    expect((e3.detail?.mismatches as unknown[]).length).to.equal(3);
    expect(fails(factura({ monto_exento: 1 })).detail).to.include({ field: 'monto_exento', expected: 0 });
    expect(fails(exportBody({ monto_total: 20 })).detail).to.include({ field: 'monto_total', expected: 21 });
    expect(
      fails(exportBody({ otra_moneda: { tpo_moneda: 'PESO CL', tpo_cambio: 900, mnt_total: 18000 } })).detail,
    ).to.include({ field: 'otra_moneda.mnt_total', expected: 18900, declared: 18000 });
    expect(fails(note(61, { items: [item({ monto_item: -1000 })] })).code).to.equal('amount_arithmetic');
  });

  it('amounts a double cannot hold exactly are refused instead of being written rounded', () => {
    // 999999.999999 x 999999999999 = 999999999998000000.000001: far beyond 2^53
    const huge = item({
      cantidad: 999999.999999,
      precio_unitario: 999999999999,
      monto_item: 999999999998000000,
    });
    expect(issuePaths(factura({ items: [huge] }))).to.deep.equal(['items[0]']);
  });

  it('emisor_rut_mismatch, dte.sucursal.not_found and the branch in <Emisor>', () => {
    expect(fails(factura({ rut_emisor: '77777777-7' })).code).to.equal('emisor_rut_mismatch');
    expect(fails(factura({ sucursal_id: 'nope' })).code).to.equal('dte.sucursal.not_found');
    const input = validateEmission(factura({ sucursal_id: 'suc-1' }), ctx());
    const doc = buildDocument(input, { emisor: EMISOR, folio: 1 });
    expect(doc.Encabezado.Emisor).to.include({
      Sucursal: 'Casa Matriz',
      CdgSIISucur: 81234567,
      DirOrigen: 'Huérfanos 1160',
      CmnaOrigen: 'Santiago',
    });
  });

  it('emisor.profile_incompleto lists what the profile lacks; the body emisor block can supply it', () => {
    const partial: EmisorProfile = { ...EMISOR, giro: '', acteco: [] };
    const err = fails(factura(), { now: ctx().now, emisor: partial });
    expect(err.code).to.equal('emisor.profile_incompleto');
    expect(err.detail).to.deep.equal({ missing: ['giro', 'acteco'] });
    const input = validateEmission(factura({ emisor: { giro: 'Ferretería', actividadEconomica: 467300 } }), {
      now: ctx().now,
      emisor: partial,
    });
    const doc = buildDocument(input, { emisor: partial, folio: 1 });
    expect(doc.Encabezado.Emisor).to.include({ GiroEmis: 'Ferretería' });
    expect(doc.Encabezado.Emisor.Acteco).to.deep.equal([467300]);
  });

  it('buildDocument of an export without any exchange rate answers dte.tipo_cambio_unavailable', () => {
    const input = validateEmission(exportBody(), ctx());
    const err = caught(() => buildDocument(input, { emisor: EMISOR, folio: 1 }));
    expect(err.code).to.equal('dte.tipo_cambio_unavailable');
  });
});
