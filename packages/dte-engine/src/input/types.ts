import type { TipoDte } from '../model';

/** A branch (sucursal) of the company, as the company register holds it. */
export interface SucursalProfile {
  id: string | number;
  /** branch name, <Sucursal> (max 20) */
  nombre?: string;
  /** SII branch code, <CdgSIISucur> */
  codigoSii?: number;
  direccion?: string;
  comuna?: string;
  ciudad?: string;
}

/** The issuing company, from the company register (not from the request body). */
export interface EmisorProfile {
  rut: string;
  razonSocial: string;
  giro: string;
  /** actividades económicas, 1-4 */
  acteco: number[];
  direccion: string;
  comuna: string;
  ciudad?: string;
  sucursales?: SucursalProfile[];
}

export interface EmissionContext {
  /** the clock; the fecha_emision window is computed from it in America/Santiago */
  now: Date;
  emisor: EmisorProfile;
  /**
   * Types the calling path accepts. Default: those of POST /dtes (33, 34, 46, 52, 56, 61, 110,
   * 112). A known type outside this list answers dte.tipo_not_supported.
   */
  tipos?: readonly TipoDte[];
}

/** Item of the domestic shapes (33, 34, 46, 52, 56, 61). */
export interface ItemInput {
  nombre: string;
  descripcion?: string;
  cantidad: number;
  unidad?: string;
  precio_unitario: number;
  exento: boolean;
  monto_item: number;
  descuento_pct?: number;
  codigos?: { tipo: string; valor: string }[];
}

export interface ReceptorInput {
  rut: string;
  razon_social: string;
  giro?: string;
  direccion?: string;
  comuna?: string;
}

export interface DescuentoGlobalInput {
  tipo: 'descuento' | 'recargo';
  es_porcentaje: boolean;
  valor: number;
  glosa?: string;
  aplica_exento?: boolean;
}

export type CommercialAlias = 'orden_compra' | 'contrato' | 'hes' | 'HES' | 'HEM';

export interface ReferenceInput {
  line_num: number;
  tipo_doc_ref: number | CommercialAlias;
  folio_ref: number | string;
  fecha_ref: string;
  cod_ref?: 1 | 2 | 3;
  razon_ref?: string;
}

export interface PagoInput {
  fecha: string;
  monto: number;
  glosa?: string;
}

export interface EmisorOverrideInput {
  giro?: string;
  direccion?: string;
  comuna?: string;
  actividadEconomica?: number;
}

export type NdReason = 'correccion_monto' | 'reposicion_nc_anulada' | 'interese_moratorio_contractual';
export type NcReason =
  | 'anulacion'
  | 'devolucion'
  | 'resciliacion'
  | 'descuento_posterior'
  | 'correccion_monto'
  | 'correccion_texto';

interface CommonInput {
  rut_emisor?: string;
  /** always set after validation (defaults to today in America/Santiago) */
  fecha_emision: string;
  certificate_id?: string;
  sii_env?: 'cert' | 'prod';
  sucursal_id?: string | number;
  emisor?: EmisorOverrideInput;
}

interface DomesticAmounts {
  monto_neto?: number;
  monto_exento?: number;
  iva?: number;
  monto_total?: number;
}

/** Types 33, 34, 46, 56, 61. */
export interface DteEmissionInput extends CommonInput, DomesticAmounts {
  tipo_dte: 33 | 34 | 46 | 56 | 61;
  rut_emisor: string;
  receptor: ReceptorInput;
  correo_receptor?: string[] | null;
  forma_pago?: 1 | 2 | 3;
  items: ItemInput[];
  descuento_global?: DescuentoGlobalInput[];
  override_cedida?: boolean;
  override_plazo_anulacion?: boolean;
  override_nota_previa?: boolean;
  pagos?: PagoInput[];
  references?: ReferenceInput[];
  nd_reason?: NdReason;
  nc_reason?: NcReason;
}

export interface DespachoInput {
  ind_traslado: 1 | 2 | 3 | 5 | 6 | 7;
  tipo_despacho?: 1 | 2 | 3;
  direccion_origen: string;
  direccion_destino: string;
  comuna_origen: string;
  comuna_destino: string;
  ciudad_origen?: string;
  ciudad_destino?: string;
  transportista?: { rut: string; razon_social: string };
  conductor?: { rut: string; nombre: string };
  vehiculo?: { patente: string; patente_carro?: string };
  transporte_sin_informacion?: boolean;
  transporte_nota?: string;
}

/** Type 52. */
export interface GuiaDespachoInput extends CommonInput, DomesticAmounts {
  tipo_dte: 52;
  rut_emisor: string;
  receptor: ReceptorInput;
  correo_receptor?: string[] | null;
  forma_pago?: 1 | 2 | 3;
  items: ItemInput[];
  descuento_global?: DescuentoGlobalInput[];
  references?: ReferenceInput[];
  despacho: DespachoInput;
}

export interface ExportItemInput {
  nombre: string;
  descripcion?: string;
  cantidad: number;
  unidad?: string;
  precio_unitario: number;
  exento?: true;
  monto_item: number;
}

export interface ExportReceptorInput {
  /** defaults to 55555555-5, the generic foreign customer */
  rut: string;
  razon_social: string;
  giro?: string;
  direccion?: string;
  comuna?: string;
  ciudad?: string;
  correo?: string;
  extranjero?: { num_id?: string; nacionalidad?: number };
}

export interface ExportReferenceInput {
  tipo_doc_ref: string | number;
  folio_ref: string | number;
  fecha_ref: string;
  codigo_ref?: 1 | 2 | 3;
  razon_ref?: string;
}

export interface AduanaInput {
  cod_mod_venta?: number;
  cod_clau_venta?: number;
  cod_via_transp?: number;
  cod_pto_embarque?: number;
  cod_pto_desemb?: number;
  cod_unid_peso_bruto?: number;
  cod_unid_peso_neto?: number;
  cod_pais_recep?: number;
  cod_pais_destin?: number;
  tot_clau_venta?: number;
  peso_bruto?: number;
  peso_neto?: number;
  mnt_flete?: number;
  mnt_seguro?: number;
  nombre_transp?: string;
  nombre_cia_transp?: string;
  rut_cia_transp?: string;
  id_adic_transp?: string;
  booking?: string;
  operador?: string;
  id_adic_pto_emb?: string;
  id_adic_pto_desemb?: string;
  tara?: number;
  cod_unid_med_tara?: number;
  tot_items?: number;
  tot_bultos?: number;
  tipo_bultos?: { cod_tpo_bultos?: number; cantidad_bultos?: number; marcas?: string }[];
}

/** Types 110, 111, 112: amounts in the document currency `tpo_moneda`. */
export interface ExportEmissionInput extends CommonInput {
  tipo_dte: 110 | 111 | 112;
  receptor: ExportReceptorInput;
  items: ExportItemInput[];
  tpo_moneda: string;
  ind_servicio?: number;
  monto_exento?: number;
  monto_total: number;
  otra_moneda?: { tpo_moneda: string; tpo_cambio: number; mnt_exe?: number; mnt_total: number };
  referencias?: ExportReferenceInput[];
  aduana?: AduanaInput;
}

/** A validated, normalized emission body (texts trimmed and typographic characters replaced). */
export type EmissionInput = DteEmissionInput | GuiaDespachoInput | ExportEmissionInput;

export type DomesticEmissionInput = DteEmissionInput | GuiaDespachoInput;

export function isExportInput(input: EmissionInput): input is ExportEmissionInput {
  return input.tipo_dte === 110 || input.tipo_dte === 111 || input.tipo_dte === 112;
}
