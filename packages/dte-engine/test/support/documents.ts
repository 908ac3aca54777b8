import { DteDocument, TipoDte } from '../../src/model';

/**
 * Hand-built documents of every type the pipeline signs, with the features that stress the
 * serializer: discounts and surcharges, exempt lines, withholding (46), dispatch (52),
 * references (56/61/111/112), foreign currency and customs data (110-112), and Latin-1 text
 * with characters that need escaping.
 */
export const EMISOR_RUT = '76192083-9';
export const RECEPTOR_RUT = '77777777-7';

const emisor = {
  RUTEmisor: EMISOR_RUT,
  RznSoc: 'Comercial Ñandú & Compañía Limitada',
  GiroEmis: 'Venta de artículos de computación',
  Acteco: [474100, 620200],
  DirOrigen: 'Teatinos 120, Piso 4',
  CmnaOrigen: 'Santiago',
  CiudadOrigen: 'Santiago',
};
const receptor = {
  RUTRecep: RECEPTOR_RUT,
  RznSocRecep: 'Cliente <Mayorista> "Los Álamos" S.A. con un nombre muy largo',
  GiroRecep: 'Comercio',
  DirRecep: 'San Diego 2222',
  CmnaRecep: 'Ñuñoa',
  CiudadRecep: 'Santiago',
};

export function sampleDocument(tipo: TipoDte, folio: number, fchEmis: string): DteDocument {
  const idDoc = { TipoDTE: tipo, Folio: folio, FchEmis: fchEmis };
  switch (tipo) {
    case 33:
      return {
        Encabezado: {
          IdDoc: { ...idDoc, FmaPago: 1 },
          Emisor: emisor,
          Receptor: receptor,
          Totales: { MntNeto: 86000, MntExe: 10000, TasaIVA: 19, IVA: 16340, MntTotal: 112340 },
        },
        Detalle: [
          {
            NroLinDet: 1,
            CdgItem: [{ TpoCodigo: 'INT1', VlrCodigo: '011' }],
            NmbItem: 'Parlantes Multimedia 180W. - edición especial de aniversario',
            QtyItem: 20,
            UnmdItem: 'UN',
            PrcItem: 4500,
            DescuentoPct: 5,
            DescuentoMonto: 4500,
            MontoItem: 85500,
          },
          { NroLinDet: 2, IndExe: 1, NmbItem: 'Flete exento', QtyItem: 1, PrcItem: 10000, MontoItem: 10000 },
        ],
        DscRcgGlobal: [
          { NroLinDR: 1, TpoMov: 'R', GlosaDR: 'Recargo embalaje', TpoValor: '$', ValorDR: 500 },
        ],
      };
    case 34:
      return {
        Encabezado: {
          IdDoc: idDoc,
          Emisor: emisor,
          Receptor: receptor,
          // the line (45000) less the 10 % global discount on exempt amounts
          Totales: { MntExe: 40500, MntTotal: 40500 },
        },
        Detalle: [
          {
            NroLinDet: 1,
            IndExe: 1,
            NmbItem: 'Asesoría contable exenta',
            QtyItem: 1.5,
            PrcItem: 30000,
            MontoItem: 45000,
          },
        ],
        DscRcgGlobal: [{ NroLinDR: 1, TpoMov: 'D', TpoValor: '%', ValorDR: 10, IndExeDR: 1 }],
      };
    case 46:
      return {
        Encabezado: {
          IdDoc: idDoc,
          Emisor: emisor,
          Receptor: { ...receptor, RznSocRecep: 'Pedro Agricultor' },
          Totales: {
            MntNeto: 200000,
            TasaIVA: 19,
            IVA: 38000,
            ImptoReten: [{ TipoImp: 15, TasaImp: 19, MontoImp: 38000 }],
            MntTotal: 200000,
          },
        },
        Detalle: [
          {
            NroLinDet: 1,
            NmbItem: 'Trigo a granel',
            QtyItem: 1000,
            UnmdItem: 'KG',
            PrcItem: 200,
            CodImpAdic: '15',
            MontoItem: 200000,
          },
        ],
      };
    case 52:
      return {
        Encabezado: {
          IdDoc: { ...idDoc, TipoDespacho: 2, IndTraslado: 1 },
          Emisor: emisor,
          Receptor: receptor,
          Transporte: {
            Patente: 'ABCD12',
            RUTTrans: '96543210-8',
            Chofer: { RUTChofer: '11111111-1', NombreChofer: 'José Muñoz' },
            DirDest: 'Av. Providencia 1234',
            CmnaDest: 'Providencia',
            CiudadDest: 'Santiago',
          },
          Totales: { MntNeto: 50000, TasaIVA: 19, IVA: 9500, MntTotal: 59500 },
        },
        Detalle: [
          { NroLinDet: 1, NmbItem: 'Cajas de archivo', QtyItem: 100, PrcItem: 500, MontoItem: 50000 },
        ],
      };
    case 56:
    case 61:
      return {
        Encabezado: {
          IdDoc: idDoc,
          Emisor: emisor,
          Receptor: receptor,
          Totales: { MntNeto: 10000, TasaIVA: 19, IVA: 1900, MntTotal: 11900 },
        },
        Detalle: [
          {
            NroLinDet: 1,
            NmbItem: tipo === 56 ? 'Intereses por mora' : 'Devolución parcial',
            MontoItem: 10000,
          },
        ],
        Referencia: [
          {
            NroLinRef: 1,
            TpoDocRef: '33',
            FolioRef: '60',
            FchRef: fchEmis,
            CodRef: 3,
            RazonRef: tipo === 56 ? 'Cobro de intereses' : 'Corrige montos',
          },
        ],
      };
    case 110:
    case 111:
    case 112:
      return {
        Encabezado: {
          IdDoc: { ...idDoc, FmaPagExp: 2, IndServicio: 3 },
          Emisor: emisor,
          Receptor: {
            RUTRecep: '55555555-5',
            RznSocRecep: 'Importadora del Norte Inc.',
            Extranjero: { NumId: 'EIN 12-3456789', Nacionalidad: 225 },
            GiroRecep: 'Import & Export',
            DirRecep: '1200 Brickell Ave, Miami',
          },
          Transporte: {
            Aduana: {
              CodModVenta: 1,
              CodClauVenta: 1,
              TotClauVenta: 1234.56,
              CodViaTransp: 1,
              NombreTransp: 'MSC Ñora',
              CodPtoEmbarque: 906,
              CodPtoDesemb: 262,
              Tara: 2200,
              CodUnidMedTara: 10,
              PesoBruto: 5000.5,
              CodUnidPesoBruto: 6,
              TotBultos: 3,
              TipoBultos: [{ CodTpoBultos: 75, CantBultos: 3, Marcas: 'ÑANDU-01' }],
              MntFlete: 120.5,
              MntSeguro: 12.25,
              CodPaisRecep: 225,
              CodPaisDestin: 225,
            },
          },
          Totales: { TpoMoneda: 'DOLAR USA', MntExe: 1234.56, MntTotal: 1234.56 },
          OtraMoneda: {
            TpoMoneda: 'PESO CL',
            TpoCambio: 950.25,
            MntExeOtrMnda: 1173141,
            MntTotOtrMnda: 1173141,
          },
        },
        Detalle: [
          {
            NroLinDet: 1,
            NmbItem: 'Vino Carménère reserva',
            QtyItem: 120,
            UnmdItem: 'BOT',
            PrcItem: 10.288,
            MontoItem: 1234.56,
          },
        ],
        ...(tipo === 110
          ? {}
          : {
              Referencia: [
                {
                  NroLinRef: 1,
                  TpoDocRef: '110',
                  FolioRef: '15',
                  FchRef: fchEmis,
                  CodRef: 3 as const,
                  RazonRef: 'Ajuste',
                },
              ],
            }),
      };
    default:
      throw new Error(`no sample for type ${tipo}`);
  }
}

export const SIGNED_TYPES: TipoDte[] = [33, 34, 46, 52, 56, 61, 110, 111, 112];
