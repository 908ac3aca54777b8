/**
 * The document model: one DTE as the SII's DTE_v10.xsd names it, with every amount already
 * computed. It is the contract between the input side (validation and totals turn an emission
 * body into a `DteDocument`) and the XML side (which serializes it in schema order, stamps the
 * TED and signs it). Property names are the XSD element names, so the serializer needs no
 * renaming table; optional properties are omitted from the XML when undefined.
 *
 * Texts are plain Unicode strings already checked to be representable in ISO-8859-1 and within
 * the XSD's lengths; amounts are integers in CLP unless the field says otherwise (export
 * documents carry decimals in the document currency).
 */

/** Document types the pipeline handles (39/41 boletas have the shape ready for later). */
export type TipoDte = 33 | 34 | 39 | 41 | 46 | 52 | 56 | 61 | 110 | 111 | 112;

/** Export documents use the XSD's <Exportaciones> element instead of <Documento>. */
export const EXPORT_TYPES: readonly TipoDte[] = [110, 111, 112];

export interface IdDoc {
  TipoDTE: TipoDte;
  /** assigned from the CAF; 0 while the document is only a draft */
  Folio: number;
  /** YYYY-MM-DD */
  FchEmis: string;
  /** type 52 */
  TipoDespacho?: 1 | 2 | 3;
  /** type 52 */
  IndTraslado?: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;
  /** exports and services */
  IndServicio?: number;
  /** 1 contado, 2 credito, 3 sin costo */
  FmaPago?: 1 | 2 | 3;
  /** exports */
  FmaPagExp?: number;
  MntPagos?: { FchPago: string; MntPago: number; GlosaPagos?: string }[];
  FchVenc?: string;
}

export interface Emisor {
  RUTEmisor: string;
  /** razón social, 1-100 */
  RznSoc: string;
  /** 1-80 */
  GiroEmis: string;
  /** 1-4 actividades económicas */
  Acteco: number[];
  Sucursal?: string;
  CdgSIISucur?: number;
  DirOrigen?: string;
  CmnaOrigen?: string;
  CiudadOrigen?: string;
}

export interface Receptor {
  RUTRecep: string;
  RznSocRecep: string;
  /** exports */
  Extranjero?: { NumId?: string; Nacionalidad?: number };
  GiroRecep?: string;
  CorreoRecep?: string;
  DirRecep?: string;
  CmnaRecep?: string;
  CiudadRecep?: string;
}

/** Type 52 dispatch and export customs data share the XSD's <Transporte>. */
export interface Transporte {
  Patente?: string;
  RUTTrans?: string;
  Chofer?: { RUTChofer: string; NombreChofer: string };
  DirDest?: string;
  CmnaDest?: string;
  CiudadDest?: string;
  Aduana?: Aduana;
}

export interface Aduana {
  CodModVenta?: number;
  CodClauVenta?: number;
  TotClauVenta?: number;
  CodViaTransp?: number;
  NombreTransp?: string;
  RUTCiaTransp?: string;
  NomCiaTransp?: string;
  IdAdicTransp?: string;
  Booking?: string;
  Operador?: string;
  CodPtoEmbarque?: number;
  IdAdicPtoEmb?: string;
  CodPtoDesemb?: number;
  IdAdicPtoDesemb?: string;
  Tara?: number;
  CodUnidMedTara?: number;
  PesoBruto?: number;
  CodUnidPesoBruto?: number;
  PesoNeto?: number;
  CodUnidPesoNeto?: number;
  TotItems?: number;
  TotBultos?: number;
  TipoBultos?: { CodTpoBultos: number; CantBultos: number; Marcas?: string }[];
  MntFlete?: number;
  MntSeguro?: number;
  CodPaisRecep?: number;
  CodPaisDestin?: number;
}

/** Withholding (type 46: IVA retenido total, code 15). */
export interface ImptoReten {
  TipoImp: number;
  TasaImp?: number;
  MontoImp: number;
}

export interface Totales {
  /** exports: the document currency code, e.g. "DOLAR USA" (XSD puts TpoMoneda first) */
  TpoMoneda?: string;
  MntNeto?: number;
  MntExe?: number;
  /** percent, e.g. 19 */
  TasaIVA?: number;
  IVA?: number;
  ImptoReten?: ImptoReten[];
  IVANoRet?: number;
  MntTotal: number;
}

/** Exports: the totals restated in another currency (usually CLP, "PESO CL"). */
export interface OtraMoneda {
  TpoMoneda: string;
  TpoCambio: number;
  MntNetoOtrMnda?: number;
  MntExeOtrMnda?: number;
  IVAOtrMnda?: number;
  MntTotOtrMnda: number;
}

export interface Detalle {
  NroLinDet: number;
  CdgItem?: { TpoCodigo: string; VlrCodigo: string }[];
  /** 1 exempt, 2 not billable; absent for taxable lines */
  IndExe?: 1 | 2;
  NmbItem: string;
  DscItem?: string;
  QtyItem?: number;
  UnmdItem?: string;
  PrcItem?: number;
  DescuentoPct?: number;
  DescuentoMonto?: number;
  /** type 46 lines under withholding carry CodImpAdic 15 */
  CodImpAdic?: string;
  MontoItem: number;
}

export interface DscRcgGlobal {
  NroLinDR: number;
  /** D descuento, R recargo */
  TpoMov: 'D' | 'R';
  GlosaDR?: string;
  /** % or $ */
  TpoValor: '%' | '$';
  ValorDR: number;
  /** 1 when it applies to exempt amounts */
  IndExeDR?: 1 | 2;
}

export interface Referencia {
  NroLinRef: number;
  /** document type code, or a non-tax code such as "801", "HES" */
  TpoDocRef: string;
  IndGlobal?: 1;
  FolioRef: string;
  FchRef: string;
  /** 1 annuls, 2 corrects text, 3 corrects amounts */
  CodRef?: 1 | 2 | 3;
  RazonRef?: string;
}

/** One DTE, ready to be stamped and signed. */
export interface DteDocument {
  Encabezado: {
    IdDoc: IdDoc;
    Emisor: Emisor;
    Receptor: Receptor;
    Transporte?: Transporte;
    Totales: Totales;
    OtraMoneda?: OtraMoneda;
  };
  Detalle: Detalle[];
  DscRcgGlobal?: DscRcgGlobal[];
  Referencia?: Referencia[];
}
