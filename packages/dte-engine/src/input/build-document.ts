import { ServiceError } from '@dte/error-catalog';
import type {
  Aduana,
  Detalle,
  DscRcgGlobal,
  DteDocument,
  Emisor,
  IdDoc,
  Receptor,
  Referencia,
  Totales,
  Transporte,
} from '../model';
import { xmlDecimal, xmlDigits, xmlText } from './latin1';
import { tpoDocRefCode } from './references';
import { normalizeRut } from './rut';
import { requireSucursal } from './business-rules';
import {
  TIPO_IMP_IVA_RETENIDO_TOTAL,
  computeTotals,
  isWithheld,
  needsExchangeRate,
  type Totals,
} from './totals';
import {
  isExportInput,
  type DomesticEmissionInput,
  type EmisorProfile,
  type EmissionInput,
  type ExportEmissionInput,
} from './types';

export interface BuildContext {
  emisor: EmisorProfile;
  /** the folio assigned from the CAF (0 for a draft) */
  folio: number;
  /** exports: CLP per unit of the document currency, when the body has no otra_moneda */
  exchangeRate?: number;
}

/**
 * Maps a validated emission body to the DteDocument the XML side serializes, with every amount
 * computed (computeTotals). Every text goes through xmlText: the spec's typographic replacements,
 * then dte.field_not_latin1 / dte.field_too_long against the length of its XSD element; integer
 * codes with an XSD totalDigits bound go through xmlDigits. Raises emisor.profile_incompleto
 * when the company profile lacks what the Emisor element needs, and dte.tipo_cambio_unavailable
 * for an export with no exchange rate.
 */
export function buildDocument(input: EmissionInput, ctx: BuildContext): DteDocument {
  if (!Number.isInteger(ctx.folio) || ctx.folio < 0)
    throw new TypeError(`folio must be an integer >= 0: ${ctx.folio}`);
  if (needsExchangeRate(input) && ctx.exchangeRate === undefined) {
    throw new ServiceError(
      'dte.tipo_cambio_unavailable',
      `no exchange rate for ${(input as ExportEmissionInput).tpo_moneda}: the export cannot state its amounts in pesos`,
      { detail: { tpo_moneda: (input as ExportEmissionInput).tpo_moneda } },
    );
  }
  const totals = computeTotals(
    input,
    ctx.exchangeRate === undefined ? {} : { exchangeRate: ctx.exchangeRate },
  );
  return mapDocument(input, ctx, totals);
}

/**
 * Where a document holds its folio, and nowhere else: a draft built with folio 0 becomes the
 * document of folio N by setting this path alone (an emission builds before it takes the folio,
 * which the database sets in the same statement that takes it: jsonb_set on this path).
 */
export const DOCUMENT_FOLIO_PATH = ['Encabezado', 'IdDoc', 'Folio'] as const;

/** The mapping with totals already computed (validateEmission runs it as a dry run, folio 0). */
export function mapDocument(input: EmissionInput, ctx: BuildContext, totals: Totals): DteDocument {
  const emisor = mapEmisor(input, ctx.emisor);
  const idDoc: IdDoc = { TipoDTE: input.tipo_dte, Folio: ctx.folio, FchEmis: input.fecha_emision };
  if (isExportInput(input)) {
    if (input.ind_servicio !== undefined) idDoc.IndServicio = input.ind_servicio;
    const transporte = input.aduana ? { Aduana: mapAduana(input) } : undefined;
    const totales: Totales = {
      TpoMoneda: input.tpo_moneda,
      MntExe: totals.montoExento ?? 0,
      MntTotal: totals.montoTotal,
    };
    return {
      Encabezado: {
        IdDoc: idDoc,
        Emisor: emisor,
        Receptor: mapExportReceptor(input),
        ...(transporte ? { Transporte: transporte } : {}),
        Totales: totales,
        ...(totals.otraMoneda
          ? {
              OtraMoneda: {
                TpoMoneda: totals.otraMoneda.tpoMoneda,
                TpoCambio: totals.otraMoneda.tpoCambio,
                MntExeOtrMnda: totals.otraMoneda.montoExento,
                MntTotOtrMnda: totals.otraMoneda.montoTotal,
              },
            }
          : {}),
      },
      Detalle: input.items.map((item, i) => {
        const d: Detalle = {
          NroLinDet: i + 1,
          NmbItem: xmlText(item.nombre, `items[${i}].nombre`, 'NmbItem', 80),
          MontoItem: totals.lines[i].montoItem,
        };
        // export lines are exempt by nature (the body admits only exento: true)
        d.IndExe = 1;
        if (item.descripcion)
          d.DscItem = xmlText(item.descripcion, `items[${i}].descripcion`, 'DscItem', 1000);
        d.QtyItem = item.cantidad;
        if (item.unidad) d.UnmdItem = xmlText(item.unidad, `items[${i}].unidad`, 'UnmdItem', 4);
        if (item.precio_unitario > 0) d.PrcItem = item.precio_unitario;
        return d;
      }),
      ...mapExportReferences(input),
    };
  }
  return mapDomestic(input, idDoc, emisor, totals);
}

function mapDomestic(
  input: DomesticEmissionInput,
  idDoc: IdDoc,
  emisor: Emisor,
  totals: Totals,
): DteDocument {
  if (input.tipo_dte === 52) {
    const d = input.despacho;
    if (d.tipo_despacho !== undefined) idDoc.TipoDespacho = d.tipo_despacho;
    idDoc.IndTraslado = d.ind_traslado;
  }
  if (input.forma_pago !== undefined) idDoc.FmaPago = input.forma_pago;
  if (input.tipo_dte !== 52 && input.pagos?.length) {
    idDoc.MntPagos = input.pagos.map((p, i) => ({
      FchPago: p.fecha,
      MntPago: p.monto,
      ...(p.glosa ? { GlosaPagos: xmlText(p.glosa, `pagos[${i}].glosa`, 'GlosaPagos', 40) } : {}),
    }));
  }

  const r = input.receptor;
  const receptor: Receptor = {
    RUTRecep: normalizeRut(r.rut),
    RznSocRecep: xmlText(r.razon_social, 'receptor.razon_social', 'RznSocRecep', 100),
  };
  if (r.giro) receptor.GiroRecep = xmlText(r.giro, 'receptor.giro', 'GiroRecep', 40);
  if (r.direccion) receptor.DirRecep = xmlText(r.direccion, 'receptor.direccion', 'DirRecep', 70);
  if (r.comuna) receptor.CmnaRecep = xmlText(r.comuna, 'receptor.comuna', 'CmnaRecep', 20);

  let transporte: Transporte | undefined;
  if (input.tipo_dte === 52) {
    const d = input.despacho;
    transporte = {};
    if (d.vehiculo)
      transporte.Patente = xmlText(d.vehiculo.patente, 'despacho.vehiculo.patente', 'Patente', 8);
    if (d.transportista) transporte.RUTTrans = normalizeRut(d.transportista.rut);
    if (d.conductor) {
      transporte.Chofer = {
        RUTChofer: normalizeRut(d.conductor.rut),
        NombreChofer: xmlText(d.conductor.nombre, 'despacho.conductor.nombre', 'NombreChofer', 30),
      };
    }
    transporte.DirDest = xmlText(d.direccion_destino, 'despacho.direccion_destino', 'DirDest', 70);
    transporte.CmnaDest = xmlText(d.comuna_destino, 'despacho.comuna_destino', 'CmnaDest', 20);
    if (d.ciudad_destino)
      transporte.CiudadDest = xmlText(d.ciudad_destino, 'despacho.ciudad_destino', 'CiudadDest', 20);
  }

  const totales: Totales = { MntTotal: totals.montoTotal };
  if (totals.montoNeto !== undefined) totales.MntNeto = totals.montoNeto;
  if (totals.montoExento !== undefined) totales.MntExe = totals.montoExento;
  if (totals.tasaIva !== undefined) totales.TasaIVA = totals.tasaIva;
  if (totals.iva !== undefined) totales.IVA = totals.iva;
  // <ImptoReten> MontoImp is a positiveInteger: written when something is withheld.
  if (totals.ivaRetenido) {
    totales.ImptoReten = [
      { TipoImp: TIPO_IMP_IVA_RETENIDO_TOTAL, TasaImp: totals.tasaIva, MontoImp: totals.ivaRetenido },
    ];
  }
  if (totals.ivaNoRetenido) totales.IVANoRet = totals.ivaNoRetenido;

  const withheld = isWithheld(input);
  const detalle = input.items.map((item, i): Detalle => {
    const line = totals.lines[i];
    const d = { NroLinDet: i + 1 } as Detalle;
    if (item.codigos?.length) {
      d.CdgItem = item.codigos.map((c, j) => ({
        TpoCodigo: xmlText(c.tipo, `items[${i}].codigos[${j}].tipo`, 'TpoCodigo', 10),
        VlrCodigo: xmlText(c.valor, `items[${i}].codigos[${j}].valor`, 'VlrCodigo', 35),
      }));
    }
    if (item.exento) d.IndExe = 1;
    d.NmbItem = xmlText(item.nombre, `items[${i}].nombre`, 'NmbItem', 80);
    if (item.descripcion) d.DscItem = xmlText(item.descripcion, `items[${i}].descripcion`, 'DscItem', 1000);
    d.QtyItem = item.cantidad;
    if (item.unidad) d.UnmdItem = xmlText(item.unidad, `items[${i}].unidad`, 'UnmdItem', 4);
    // PrcItem is Dec12_6 with minInclusive 0.000001: a zero price is not written.
    if (item.precio_unitario > 0) d.PrcItem = item.precio_unitario;
    if (line.descuentoMonto !== undefined) {
      d.DescuentoPct = item.descuento_pct;
      d.DescuentoMonto = line.descuentoMonto;
    }
    if (withheld && !item.exento) d.CodImpAdic = String(TIPO_IMP_IVA_RETENIDO_TOTAL);
    d.MontoItem = line.montoItem;
    return d;
  });

  const doc: DteDocument = {
    Encabezado: {
      IdDoc: idDoc,
      Emisor: emisor,
      Receptor: receptor,
      ...(transporte ? { Transporte: transporte } : {}),
      Totales: totales,
    },
    Detalle: detalle,
  };
  const globals = input.descuento_global ?? [];
  if (globals.length) {
    doc.DscRcgGlobal = globals.map((g, i): DscRcgGlobal => ({
      NroLinDR: i + 1,
      TpoMov: g.tipo === 'descuento' ? 'D' : 'R',
      ...(g.glosa ? { GlosaDR: xmlText(g.glosa, `descuento_global[${i}].glosa`, 'GlosaDR', 45) } : {}),
      TpoValor: g.es_porcentaje ? '%' : '$',
      ValorDR: g.valor,
      ...(totals.globals[i].aplicaExento ? { IndExeDR: 1 as const } : {}),
    }));
  }
  const refs = input.references ?? [];
  if (refs.length) {
    const byLine = refs.map((ref, i) => ({ ref, i })).sort((a, b) => a.ref.line_num - b.ref.line_num);
    doc.Referencia = byLine.map(({ ref, i }): Referencia => ({
      NroLinRef: ref.line_num,
      TpoDocRef: xmlText(tpoDocRefCode(ref.tipo_doc_ref), `references[${i}].tipo_doc_ref`, 'TpoDocRef', 3),
      FolioRef: xmlText(String(ref.folio_ref), `references[${i}].folio_ref`, 'FolioRef', 18),
      FchRef: ref.fecha_ref,
      ...(ref.cod_ref !== undefined ? { CodRef: ref.cod_ref } : {}),
      ...(ref.razon_ref
        ? { RazonRef: xmlText(ref.razon_ref, `references[${i}].razon_ref`, 'RazonRef', 90) }
        : {}),
    }));
  }
  return doc;
}

/**
 * <Emisor> from the company profile, with the body's emisor block (giro, direccion, comuna,
 * actividadEconomica) and the branch (sucursal_id) taking precedence, and for type 52 the
 * despacho's origin. Field names in errors: "emisor.*" for the body, "emisor_profile.*" for
 * the profile, "sucursal.*" for the branch.
 */
function mapEmisor(input: EmissionInput, profile: EmisorProfile): Emisor {
  const body = input.emisor ?? {};
  const sucursal = input.sucursal_id !== undefined ? requireSucursal(profile, input.sucursal_id) : undefined;
  const despacho = input.tipo_dte === 52 ? input.despacho : undefined;
  const pick = (candidates: [string | undefined, string][]): { value: string; field: string } | undefined => {
    for (const [value, field] of candidates) if (value) return { value, field };
    return undefined;
  };
  const giro = pick([
    [body.giro, 'emisor.giro'],
    [profile.giro, 'emisor_profile.giro'],
  ]);
  const direccion = pick([
    [despacho?.direccion_origen, 'despacho.direccion_origen'],
    [body.direccion, 'emisor.direccion'],
    [sucursal?.direccion, 'sucursal.direccion'],
    [profile.direccion, 'emisor_profile.direccion'],
  ]);
  const comuna = pick([
    [despacho?.comuna_origen, 'despacho.comuna_origen'],
    [body.comuna, 'emisor.comuna'],
    [sucursal?.comuna, 'sucursal.comuna'],
    [profile.comuna, 'emisor_profile.comuna'],
  ]);
  const ciudad = pick([
    [despacho?.ciudad_origen, 'despacho.ciudad_origen'],
    [sucursal?.ciudad, 'sucursal.ciudad'],
    [profile.ciudad, 'emisor_profile.ciudad'],
  ]);
  const acteco = body.actividadEconomica !== undefined ? [body.actividadEconomica] : (profile.acteco ?? []);

  const missing: string[] = [];
  if (!profile.rut) missing.push('rut');
  if (!profile.razonSocial) missing.push('razonSocial');
  if (!giro) missing.push('giro');
  if (acteco.length === 0) missing.push('acteco');
  if (!direccion) missing.push('direccion');
  if (!comuna) missing.push('comuna');
  if (missing.length > 0) {
    throw new ServiceError('emisor.profile_incompleto', `the company profile lacks ${missing.join(', ')}`, {
      detail: { missing },
    });
  }
  if (acteco.length > 4) {
    throw new ServiceError(
      'dte.field_too_long',
      `the company has ${acteco.length} actividades; <Acteco> repeats at most 4`,
      {
        detail: {
          field: 'emisor_profile.acteco',
          element: 'Acteco',
          maxLength: 4,
          actualLength: acteco.length,
        },
      },
    );
  }
  const emisor: Emisor = {
    RUTEmisor: normalizeRut(profile.rut),
    RznSoc: xmlText(profile.razonSocial, 'emisor_profile.razonSocial', 'RznSoc', 100),
    GiroEmis: xmlText(giro!.value, giro!.field, 'GiroEmis', 80),
    Acteco: acteco.map((a, i) =>
      xmlDigits(
        a,
        body.actividadEconomica !== undefined ? 'emisor.actividadEconomica' : `emisor_profile.acteco[${i}]`,
        'Acteco',
        6,
      ),
    ),
  };
  if (sucursal?.nombre) emisor.Sucursal = xmlText(sucursal.nombre, 'sucursal.nombre', 'Sucursal', 20);
  if (sucursal?.codigoSii !== undefined)
    emisor.CdgSIISucur = xmlDigits(sucursal.codigoSii, 'sucursal.codigoSii', 'CdgSIISucur', 9);
  emisor.DirOrigen = xmlText(direccion!.value, direccion!.field, 'DirOrigen', 70);
  emisor.CmnaOrigen = xmlText(comuna!.value, comuna!.field, 'CmnaOrigen', 20);
  if (ciudad) emisor.CiudadOrigen = xmlText(ciudad.value, ciudad.field, 'CiudadOrigen', 20);
  return emisor;
}

function mapExportReceptor(input: ExportEmissionInput): Receptor {
  const r = input.receptor;
  const receptor: Receptor = {
    RUTRecep: normalizeRut(r.rut),
    RznSocRecep: xmlText(r.razon_social, 'receptor.razon_social', 'RznSocRecep', 100),
  };
  if (r.extranjero && (r.extranjero.num_id || r.extranjero.nacionalidad !== undefined)) {
    receptor.Extranjero = {};
    if (r.extranjero.num_id)
      receptor.Extranjero.NumId = xmlText(r.extranjero.num_id, 'receptor.extranjero.num_id', 'NumId', 20);
    if (r.extranjero.nacionalidad !== undefined) {
      receptor.Extranjero.Nacionalidad = xmlDigits(
        r.extranjero.nacionalidad,
        'receptor.extranjero.nacionalidad',
        'Nacionalidad',
        3,
      );
    }
  }
  if (r.giro) receptor.GiroRecep = xmlText(r.giro, 'receptor.giro', 'GiroRecep', 40);
  if (r.correo) receptor.CorreoRecep = xmlText(r.correo, 'receptor.correo', 'CorreoRecep', 80);
  if (r.direccion) receptor.DirRecep = xmlText(r.direccion, 'receptor.direccion', 'DirRecep', 70);
  if (r.comuna) receptor.CmnaRecep = xmlText(r.comuna, 'receptor.comuna', 'CmnaRecep', 20);
  if (r.ciudad) receptor.CiudadRecep = xmlText(r.ciudad, 'receptor.ciudad', 'CiudadRecep', 20);
  return receptor;
}

/**
 * <Aduana>. Elements typed positiveInteger (TotItems, TotBultos, CantBultos) or with a minimum
 * of 0.01/0.0001 (TotClauVenta, MntFlete, MntSeguro; the SII: "estrictamente mayor que cero")
 * are not written when the body says 0, which the spec admits (>= 0) and means "none".
 */
function mapAduana(input: ExportEmissionInput): Aduana {
  const a = input.aduana ?? {};
  const out: Aduana = {};
  const code = (v: number | undefined, field: string, element: string, digits: number): number | undefined =>
    v === undefined ? undefined : xmlDigits(v, `aduana.${field}`, element, digits);
  const text = (v: string | undefined, field: string, element: string, max: number): string | undefined =>
    v ? xmlText(v, `aduana.${field}`, element, max) : undefined;
  const positive = (v: number | undefined): number | undefined => (v ? v : undefined);
  const dec = (v: number | undefined, field: string, element: string, digits: number): number | undefined =>
    v === undefined ? undefined : xmlDecimal(v, `aduana.${field}`, element, digits);
  const entries: [keyof Aduana, unknown][] = [
    ['CodModVenta', code(a.cod_mod_venta, 'cod_mod_venta', 'CodModVenta', 2)],
    ['CodClauVenta', code(a.cod_clau_venta, 'cod_clau_venta', 'CodClauVenta', 2)],
    ['TotClauVenta', dec(positive(a.tot_clau_venta), 'tot_clau_venta', 'TotClauVenta', 18)],
    ['CodViaTransp', code(a.cod_via_transp, 'cod_via_transp', 'CodViaTransp', 2)],
    ['NombreTransp', text(a.nombre_transp, 'nombre_transp', 'NombreTransp', 40)],
    ['RUTCiaTransp', a.rut_cia_transp ? normalizeRut(a.rut_cia_transp) : undefined],
    ['NomCiaTransp', text(a.nombre_cia_transp, 'nombre_cia_transp', 'NomCiaTransp', 40)],
    ['IdAdicTransp', text(a.id_adic_transp, 'id_adic_transp', 'IdAdicTransp', 20)],
    ['Booking', text(a.booking, 'booking', 'Booking', 20)],
    ['Operador', text(a.operador, 'operador', 'Operador', 20)],
    ['CodPtoEmbarque', code(a.cod_pto_embarque, 'cod_pto_embarque', 'CodPtoEmbarque', 4)],
    ['IdAdicPtoEmb', text(a.id_adic_pto_emb, 'id_adic_pto_emb', 'IdAdicPtoEmb', 20)],
    ['CodPtoDesemb', code(a.cod_pto_desemb, 'cod_pto_desemb', 'CodPtoDesemb', 4)],
    ['IdAdicPtoDesemb', text(a.id_adic_pto_desemb, 'id_adic_pto_desemb', 'IdAdicPtoDesemb', 20)],
    ['Tara', a.tara],
    ['CodUnidMedTara', a.cod_unid_med_tara],
    ['PesoBruto', dec(a.peso_bruto, 'peso_bruto', 'PesoBruto', 10)],
    ['CodUnidPesoBruto', code(a.cod_unid_peso_bruto, 'cod_unid_peso_bruto', 'CodUnidPesoBruto', 2)],
    ['PesoNeto', dec(a.peso_neto, 'peso_neto', 'PesoNeto', 10)],
    ['CodUnidPesoNeto', code(a.cod_unid_peso_neto, 'cod_unid_peso_neto', 'CodUnidPesoNeto', 2)],
    ['TotItems', positive(a.tot_items)],
    ['TotBultos', positive(a.tot_bultos)],
    [
      'TipoBultos',
      a.tipo_bultos?.length
        ? a.tipo_bultos.map((b, i) => ({
            ...(b.cod_tpo_bultos !== undefined
              ? {
                  CodTpoBultos: xmlDigits(
                    b.cod_tpo_bultos,
                    `aduana.tipo_bultos[${i}].cod_tpo_bultos`,
                    'CodTpoBultos',
                    3,
                  ),
                }
              : {}),
            ...(b.cantidad_bultos
              ? {
                  CantBultos: xmlDigits(
                    b.cantidad_bultos,
                    `aduana.tipo_bultos[${i}].cantidad_bultos`,
                    'CantBultos',
                    10,
                  ),
                }
              : {}),
            ...(b.marcas
              ? { Marcas: xmlText(b.marcas, `aduana.tipo_bultos[${i}].marcas`, 'Marcas', 255) }
              : {}),
          }))
        : undefined,
    ],
    ['MntFlete', dec(positive(a.mnt_flete), 'mnt_flete', 'MntFlete', 18)],
    ['MntSeguro', dec(positive(a.mnt_seguro), 'mnt_seguro', 'MntSeguro', 18)],
    ['CodPaisRecep', code(a.cod_pais_recep, 'cod_pais_recep', 'CodPaisRecep', 3)],
    ['CodPaisDestin', code(a.cod_pais_destin, 'cod_pais_destin', 'CodPaisDestin', 3)],
  ];
  for (const [key, value] of entries) if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  return out;
}

function mapExportReferences(input: ExportEmissionInput): { Referencia?: Referencia[] } {
  const refs = input.referencias ?? [];
  if (!refs.length) return {};
  return {
    Referencia: refs.map((ref, i) => ({
      NroLinRef: i + 1,
      TpoDocRef: xmlText(String(ref.tipo_doc_ref), `referencias[${i}].tipo_doc_ref`, 'TpoDocRef', 3),
      FolioRef: xmlText(String(ref.folio_ref), `referencias[${i}].folio_ref`, 'FolioRef', 18),
      FchRef: ref.fecha_ref,
      ...(ref.codigo_ref !== undefined ? { CodRef: ref.codigo_ref } : {}),
      ...(ref.razon_ref
        ? { RazonRef: xmlText(ref.razon_ref, `referencias[${i}].razon_ref`, 'RazonRef', 90) }
        : {}),
    })),
  };
}
