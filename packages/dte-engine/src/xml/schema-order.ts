/**
 * Element order of DTE_v10.xsd, limited to the elements the model (model.ts) carries. A spec
 * maps each child name, in schema order, to the spec of its own children (or `null` for a leaf).
 * `Documento` and `Exportaciones` differ (exports have no IndTraslado, a reduced Totales and
 * OtraMoneda), so each has its own table. Keys of the model that are not in the table for the
 * document's type are rejected by the writer rather than dropped.
 */
export type OrderSpec = { readonly [element: string]: OrderSpec | null };

const leaves = (...names: string[]): OrderSpec => Object.fromEntries(names.map((n) => [n, null]));

const CHOFER = leaves('RUTChofer', 'NombreChofer');
const TIPO_BULTOS = leaves('CodTpoBultos', 'CantBultos', 'Marcas', 'IdContainer', 'Sello', 'EmisorSello');
const ADUANA: OrderSpec = {
  ...leaves(
    'CodModVenta',
    'CodClauVenta',
    'TotClauVenta',
    'CodViaTransp',
    'NombreTransp',
    'RUTCiaTransp',
    'NomCiaTransp',
    'IdAdicTransp',
    'Booking',
    'Operador',
    'CodPtoEmbarque',
    'IdAdicPtoEmb',
    'CodPtoDesemb',
    'IdAdicPtoDesemb',
    'Tara',
    'CodUnidMedTara',
    'PesoBruto',
    'CodUnidPesoBruto',
    'PesoNeto',
    'CodUnidPesoNeto',
    'TotItems',
    'TotBultos',
  ),
  TipoBultos: TIPO_BULTOS,
  ...leaves('MntFlete', 'MntSeguro', 'CodPaisRecep', 'CodPaisDestin'),
};
const TRANSPORTE: OrderSpec = {
  Patente: null,
  RUTTrans: null,
  Chofer: CHOFER,
  DirDest: null,
  CmnaDest: null,
  CiudadDest: null,
  Aduana: ADUANA,
};
const MNT_PAGOS = leaves('FchPago', 'MntPago', 'GlosaPagos');
const CDG_ITEM = leaves('TpoCodigo', 'VlrCodigo');

const DETALLE: OrderSpec = {
  NroLinDet: null,
  CdgItem: CDG_ITEM,
  IndExe: null,
  NmbItem: null,
  DscItem: null,
  QtyItem: null,
  UnmdItem: null,
  PrcItem: null,
  DescuentoPct: null,
  DescuentoMonto: null,
  CodImpAdic: null,
  MontoItem: null,
};
const EXPORT_DETALLE: OrderSpec = Object.fromEntries(
  Object.entries(DETALLE).filter(([k]) => k !== 'CodImpAdic'),
) as OrderSpec;

const DSC_RCG = leaves('NroLinDR', 'TpoMov', 'GlosaDR', 'TpoValor', 'ValorDR', 'IndExeDR');
const REFERENCIA = leaves('NroLinRef', 'TpoDocRef', 'IndGlobal', 'FolioRef', 'FchRef', 'CodRef', 'RazonRef');

const RECEPTOR: OrderSpec = {
  RUTRecep: null,
  RznSocRecep: null,
  Extranjero: leaves('NumId', 'Nacionalidad'),
  ...leaves('GiroRecep', 'CorreoRecep', 'DirRecep', 'CmnaRecep', 'CiudadRecep'),
};
const EMISOR = leaves(
  'RUTEmisor',
  'RznSoc',
  'GiroEmis',
  'Acteco',
  'Sucursal',
  'CdgSIISucur',
  'DirOrigen',
  'CmnaOrigen',
  'CiudadOrigen',
);

export const DOCUMENTO_ORDER: OrderSpec = {
  Encabezado: {
    IdDoc: {
      ...leaves(
        'TipoDTE',
        'Folio',
        'FchEmis',
        'TipoDespacho',
        'IndTraslado',
        'IndServicio',
        'FmaPago',
        'FmaPagExp',
      ),
      MntPagos: MNT_PAGOS,
      FchVenc: null,
    },
    Emisor: EMISOR,
    Receptor: RECEPTOR,
    Transporte: TRANSPORTE,
    Totales: {
      ...leaves('MntNeto', 'MntExe', 'TasaIVA', 'IVA'),
      ImptoReten: leaves('TipoImp', 'TasaImp', 'MontoImp'),
      ...leaves('IVANoRet', 'MntTotal'),
    },
    OtraMoneda: leaves(
      'TpoMoneda',
      'TpoCambio',
      'MntNetoOtrMnda',
      'MntExeOtrMnda',
      'IVAOtrMnda',
      'MntTotOtrMnda',
    ),
  },
  Detalle: DETALLE,
  DscRcgGlobal: DSC_RCG,
  Referencia: REFERENCIA,
};

export const EXPORTACIONES_ORDER: OrderSpec = {
  Encabezado: {
    IdDoc: {
      ...leaves('TipoDTE', 'Folio', 'FchEmis', 'TipoDespacho', 'IndServicio', 'FmaPago', 'FmaPagExp'),
      MntPagos: MNT_PAGOS,
      FchVenc: null,
    },
    Emisor: EMISOR,
    Receptor: RECEPTOR,
    Transporte: TRANSPORTE,
    Totales: leaves('TpoMoneda', 'MntExe', 'MntTotal'),
    OtraMoneda: leaves('TpoMoneda', 'TpoCambio', 'MntExeOtrMnda', 'MntTotOtrMnda'),
  },
  Detalle: EXPORT_DETALLE,
  DscRcgGlobal: DSC_RCG,
  Referencia: REFERENCIA,
};
